#!/usr/bin/env bash
# Compiles every real model of configs/models/models.txt present in the model cache, runs it on the
# simulated NPU (every checker on, every NPU segment compared bit for bit with the int8 reference)
# and judges its final outputs against onnxruntime fp32 on the same inputs (cosine, top-1). Prints
# one markdown table: MACs, segments, instructions, SRAM peak, the arena's peak per planner against
# the lower bound, simulated cycles, MACs/cycle, compile and simulation time, min cosine, the worst
# max|diff|/max|ref|, top-1.
#
#   scripts/model-report.sh [--npuforge BIN] [--only a,b] [--rtl NAME] [--min-cosine C] [--work DIR]
#
#   --npuforge BIN   the npuforge binary (default build/tools/npuforge)
#   --only a,b       these models only (default: every model in the list present in the cache)
#   --rtl NAME       also run NAME with --rtl (the Verilated blocks in the loop)
#   --min-cosine C   a model below C against onnxruntime fails the report (default 0.99; the list's
#                    known misses are shown with their floor from tests/compiler/model_list.h)
#   --work DIR       where bundles and outputs go (default a fresh temporary directory)
# Calibration as the tests do it: the model's calibration set in the cache, else seeded random
# inputs in the list's range. Needs onnxruntime-node (scripts/install-ort.sh) and the models
# (scripts/prepare-models.sh). Exit 1 when any model fails a segment, a checker or the cosine.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib/models.sh
source "$root/scripts/lib/models.sh"
npuforge=$root/build/tools/npuforge
only=""
rtl_model=""
min_cosine=0.99
work=""
while [ $# -gt 0 ]; do
  case "$1" in
    --npuforge) npuforge=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --rtl) rtl_model=$2; shift 2 ;;
    --min-cosine) min_cosine=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    *) echo "model-report: unknown argument '$1' (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
done
list=${NPUFORGE_MODEL_LIST:-$root/configs/models/models.txt}
cache=${NPUFORGE_MODEL_CACHE:-$HOME/.cache/npuforge/models}
[ -x "$npuforge" ] || { echo "model-report: no npuforge binary at $npuforge (--npuforge BIN)" >&2; exit 2; }
[ -n "$work" ] || work=$(mktemp -d /tmp/model-report.XXXXXX)
mkdir -p "$work"
planners=(naive linked-list greedy-size lifetime-aware best)
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
secs() { awk -v ms="$1" 'BEGIN { printf "%.2f", ms / 1000 }'; }

# The accuracy floor a known miss is held to (tests/compiler/model_list.h), else --min-cosine.
floor_of() {
  local f
  f=$(sed -n "s/.*{\"$1\", *{\([0-9.]*\),.*/\1/p" "$root/tests/compiler/model_list.h" | head -n 1)
  echo "${f:-$min_cosine}"
}

# report_model NAME SOURCE INPUTS OPTIONS: prints one table row, returns 1 when the model fails.
report_model() {
  local name=$1 inputs=$3 options=$4
  local model=$cache/$name.onnx dir=$work/$name
  rm -rf "$dir" && mkdir -p "$dir"
  model_parse_inputs "$inputs" "$options"
  local -a names=("${model_input_names[@]}") compile_args=("${model_shape_args[@]}")
  local -a calib=()
  local k=0
  while [ -e "$cache/inputs/$name/calibration/calib${k}_in0.npy" ]; do
    for i in "${!names[@]}"; do calib+=("$cache/inputs/$name/calibration/calib${k}_in$i.npy"); done
    k=$((k + 1))
  done
  if [ ${#calib[@]} -gt 0 ]; then compile_args+=(--calibrate "${calib[@]}"); else compile_args+=(--seed 1000 --random-range "$model_input_lo" "$model_input_hi"); fi

  local t0 compile_ms
  t0=$(now_ms)
  if ! "$npuforge" compile "$model" "${compile_args[@]}" --export-lifetimes "$dir/lifetimes.csv" -o "$dir/out" \
       > "$dir/compile.log" 2>&1; then
    echo "| $name | compile failed: $(grep -m1 -i error "$dir/compile.log" || tail -n 1 "$dir/compile.log") |"
    return 1
  fi
  compile_ms=$(( $(now_ms) - t0 ))
  local macs instrs sram npu_segs cpu_segs
  macs=$(sed -n 's/^instructions:.*MACs: \([0-9]*\).*/\1/p' "$dir/compile.log")
  instrs=$(sed -n 's/^instructions: \([0-9]*\).*/\1/p' "$dir/compile.log")
  sram=$(sed -n 's/^instructions:.*SRAM peak: \([0-9]*\).*/\1/p' "$dir/compile.log")
  npu_segs=$(grep -cE '^  seg[0-9]+ +NPU' "$dir/compile.log" || true)
  cpu_segs=$(grep -cE '^  seg[0-9]+ +CPU' "$dir/compile.log" || true)

  local arena="" lb="" algo line peak
  for algo in "${planners[@]}"; do
    line=$("$npuforge" plan "$dir/lifetimes.csv" --algo "$algo" --time-limit 10 2>&1 | tail -n 1)
    peak=$(sed -n 's/.* peak \([0-9]*\) bytes.*/\1/p' <<< "$line")
    lb=$(sed -n 's/.*lower bound \([0-9]*\).*/\1/p' <<< "$line")
    arena+="${arena:+ / }${peak:-?}"
  done

  model_input_sets "$cache" "$name"
  local -a sets=("${model_sets[@]}")
  local floor min_cos="" max_rel="" rel max_steps="" steps cycles="" top1_same=0 top1_total=0 a b run_ms_total=0 ok=1 set out cos
  floor=$(floor_of "$name")
  for set in "${sets[@]}"; do
    out=$dir/$set
    mkdir -p "$out"
    local -a ort_args=() run_args=()
    for i in "${!names[@]}"; do
      ort_args+=(--input "${names[$i]}=$cache/inputs/$name/${set}_in$i.npy")
      run_args+=(--input "$cache/inputs/$name/${set}_in$i.npy")
    done
    node "$root/scripts/ort/run.js" "$model" "${ort_args[@]}" --output-dir "$out/ort" > "$out/ort.log" 2>&1 \
      || { echo "| $name | onnxruntime failed on $set: $(tail -n 1 "$out/ort.log") |"; return 1; }
    local outputs
    outputs=$(node -p "require('$out/ort/outputs.json').outputs.length")
    for ((o = 0; o < outputs; o++)); do run_args+=(--output "$out/y_$o.npy"); done
    t0=$(now_ms)
    "$npuforge" run-model "$dir/out" "${run_args[@]}" > "$out/run.log" 2>&1 || ok=0
    run_ms_total=$(( run_ms_total + $(now_ms) - t0 ))
    grep -q "PASS: every segment clean and bit-exact" "$out/run.log" || ok=0
    cycles=$(sed -n 's/^total: \([0-9]*\) cycles.*/\1/p' "$out/run.log")
    for ((o = 0; o < outputs; o++)); do
      line=$(node "$root/scripts/ort/compare.js" "$out/y_$o.npy" "$out/ort/output_$o.npy" --min-cosine "$floor" 2>&1) || ok=0
      echo "$name/$set output $o: $line" >> "$work/judgements.txt"
      cos=$(sed -n 's/.*cosine \([0-9.-]*\) (min.*/\1/p' <<< "$line")
      [ -n "$cos" ] && min_cos=$(awk -v a="${min_cos:-2}" -v b="$cos" 'BEGIN { print (b < a ? b : a) }')
      # A one-element output (a wake-word score) has cosine 1 whatever its error: the relative
      # error max|diff| / max|ref| says how close it is.
      rel=$(sed -n 's/.*, rel \([0-9.e+-]*\), max |diff|.*/\1/p' <<< "$line")
      [ -n "$rel" ] && max_rel=$(awk -v a="${max_rel:-0}" -v b="$rel" 'BEGIN { print (b > a ? b : a) }')
      steps=$(sed -n 's/.* elements differ, max |diff| \([0-9]*\).*/\1/p' <<< "$line")  # integer outputs
      [ -n "$steps" ] && max_steps=$(( steps > ${max_steps:-0} ? steps : ${max_steps:-0} ))
      local t
      t=$(sed -n 's/.*; top-1 \([0-9]*\) vs \([0-9]*\)$/\1 \2/p' <<< "$line")
      if [ -n "$t" ]; then
        read -r a b <<< "$t"
        top1_same=$(( top1_same + (a == b) )); top1_total=$(( top1_total + 1 ))
      fi
      t=$(sed -n 's/.*; top-1 along the last axis agrees in \([0-9]*\)\/\([0-9]*\) rows$/\1 \2/p' <<< "$line")
      if [ -n "$t" ]; then  # a sequence (a recogniser's symbol per step): rows that agree
        read -r a b <<< "$t"
        top1_same=$(( top1_same + a )); top1_total=$(( top1_total + b ))
      fi
    done
  done
  local rtl=""
  if [ "$name" = "$rtl_model" ]; then
    "$npuforge" run-model "$dir/out" --rtl --input "$cache/inputs/$name/${sets[0]}_in0.npy" --output "$dir/rtl_y.npy" \
      > "$dir/rtl.log" 2>&1 && grep -q "PASS: every segment clean and bit-exact" "$dir/rtl.log" && rtl=" (--rtl: clean, bit-exact)" \
      || { rtl=" (--rtl: FAILED, $dir/rtl.log)"; ok=0; }
  fi
  local per_mac="-"
  [ -n "$cycles" ] && [ "$cycles" -gt 0 ] && per_mac=$(awk -v m="$macs" -v c="$cycles" 'BEGIN { printf "%.1f", m / c }')
  [ -n "$max_steps" ] && max_rel="${max_rel:+$max_rel, }$max_steps steps"
  local verdict=pass
  [ "$ok" -eq 1 ] || verdict=FAIL
  local floor_note=""
  [ "$floor" != "$min_cosine" ] && floor_note=" (known miss, floor $floor)"
  printf '| %s | %s | %s/%s | %s | %s | %s (LB %s) | %s | %s | %s | %s | %s%s | %s | %s | %s%s |\n' \
    "$name" "$macs" "$npu_segs" "$cpu_segs" "$instrs" "$sram" "$arena" "$lb" "$cycles" "$per_mac" \
    "$(secs "$compile_ms")" "$(secs $(( run_ms_total / ${#sets[@]} )))" "$min_cos" "$floor_note" "$max_rel" \
    "$([ "$top1_total" -gt 0 ] && echo "$top1_same/$top1_total" || echo -)" "$verdict" "$rtl"
  [ "$ok" -eq 1 ]
}

echo "npuforge: $npuforge; models: $cache; work: $work; $(date -u +%FT%TZ); $(uptime | sed 's/.*load/load/')"
echo
echo "| model | MACs | NPU/CPU segs | instructions | SRAM peak | arena peak: ${planners[*]} | cycles | MACs/cycle | compile s | run-model s | min cosine vs onnxruntime | max\\|diff\\|/max\\|ref\\| | top-1 same | verdict |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
failed=0
while read -r name source _ inputs options; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  [[ -n "$only" && ",$only," != *,"$name",* ]] && continue
  [[ ",$options," == *,unsupported=* ]] && continue
  [ -e "$cache/$name.onnx" ] || { echo "| $name | not in the cache (scripts/prepare-models.sh) |"; continue; }
  report_model "$name" "$source" "$inputs" "$options" || failed=1
done < "$list"
echo
echo "every output's judgement: $work/judgements.txt"
exit "$failed"
