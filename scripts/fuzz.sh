#!/usr/bin/env bash
# Builds the libFuzzer targets (clang++-14, ASan + UBSan, own build dir) and runs each one
# for SECONDS (default 60), then prints executions, coverage and crashes per target.
#   scripts/fuzz.sh [SECONDS]
# Environment: FUZZ_BUILD_DIR (default build-fuzz), JOBS (build, default 2), FUZZ_TARGETS
# (space-separated subset), FUZZ_OUT (corpora, findings and logs; default $FUZZ_BUILD_DIR/run).
# Corpora persist in FUZZ_OUT between runs; a new finding is saved as
# FUZZ_OUT/findings/<target>/crash-*|timeout-*|oom-*. To keep a fixed one as a regression
# input, copy it to tests/data/fuzz_regressions/<target>/ (the tests/fuzz ctest replays it).
# Exit status: 1 when any target found something, else 0.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build=${FUZZ_BUILD_DIR:-build-fuzz}
out=${FUZZ_OUT:-$build/run}
jobs=${JOBS:-2}
all_targets="asm disasm isa_yaml npu_config gen_profile plan_csv plan_yaml memmap regress_list npy onnx onnx_tensor model_yaml"
targets=${FUZZ_TARGETS:-$all_targets}

# Only the folders the parsers live in: no simulator, RTL, CLI or benchmarks. The generator's
# tests are configured too so that CI's GCC/Clang determinism check reuses this Clang build
# (scripts/determinism.sh --in-fuzz-build) instead of compiling the libraries a second time.
cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS=-gline-tables-only -DNPUFORGE_FUZZ=ON -DNPUFORGE_BENCH=OFF \
  -DNPUFORGE_DIRS="util;isa;allocator;planner;model;gen;fuzz;tests" -DNPUFORGE_TEST_DIRS="gen" >/dev/null
cmake --build "$build" -j "$jobs" --target fuzz_all

# Seed corpora: the repository's own files, generated programs, plans and .npy files, and
# small models of Debian's ONNX test data.
seeds=$out/seeds
rm -rf "$seeds"
mkdir -p "$seeds"
"$build/fuzz/fuzz_make_seeds" "$seeds" .
copy() { local t=$1; shift; mkdir -p "$seeds/$t"; for f in "$@"; do [ -f "$f" ] && cp "$f" "$seeds/$t/$(echo "$f" | tr / _)"; done; true; }
copy asm configs/samples/*.s
copy isa_yaml isa/npu_isa.yaml tests/data/isa_extra.yaml
copy npu_config configs/npu/*.yaml
copy gen_profile configs/gen/*.yaml
copy plan_csv tests/data/minimalloc/examples/*.csv
copy regress_list configs/regress/*.yaml
copy model_yaml configs/models/*.yaml
onnx_data=/usr/share/libonnx-testdata/data/node
# Every 8th node test: a spread of ops, each model a few hundred bytes.
mapfile -t onnx_models < <(find "$onnx_data" -name model.onnx 2>/dev/null | sort | awk 'NR % 8 == 1')
copy onnx "${onnx_models[@]}"
mapfile -t onnx_tensors < <(find "$onnx_data" -name 'input_0.pb' -size -4k 2>/dev/null | sort | awk 'NR % 8 == 1')
copy onnx_tensor "${onnx_tensors[@]}"
# Saved regression inputs seed their target too.
for t in $all_targets; do
  [ -d "tests/data/fuzz_regressions/$t" ] && copy "$t" tests/data/fuzz_regressions/"$t"/*
done

dict_for() {
  case $1 in
    asm) echo "$seeds/asm.dict" ;;
    disasm | npy | onnx | onnx_tensor) [ -f "fuzz/dict/$1.dict" ] && echo "fuzz/dict/$1.dict" ;;
    *) echo "fuzz/dict/$1.dict" ;;
  esac
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
rows=()
found=0
for t in $targets; do
  corpus=$out/corpus/$t
  findings=$out/findings/$t
  log=$out/logs/$t.log
  mkdir -p "$corpus" "$findings" "$(dirname "$log")"
  dict=$(dict_for "$t" || true)
  args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2560 -malloc_limit_mb=1100 -max_len=65536
        -print_final_stats=1 -artifact_prefix="$findings/")
  [ -n "$dict" ] && [ -f "$dict" ] && args+=(-dict="$dict")
  before=$(find "$findings" -type f | wc -l)
  # -fork keeps going after a finding, so one run reports every distinct crash it meets.
  nice -n 10 "$build/fuzz/fuzz_$t" "${args[@]}" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 \
    -ignore_ooms=1 "$corpus" "$seeds/$t" >"$log" 2>&1 || true
  after=$(find "$findings" -type f | wc -l)
  new=$((after - before))
  [ "$new" -gt 0 ] && found=1
  # Fork mode prints "#RUNS: cov: C ft: F corp: N exec/s E oom/timeout/crash: O/T/K time: ..."
  last=$(grep -E '^#[0-9]+: cov: ' "$log" | tail -1 || true)
  execs=$(echo "$last" | sed -nE 's/^#([0-9]+):.*/\1/p')
  cov=$(echo "$last" | sed -nE 's/.* cov: ([0-9]+).*/\1/p')
  ft=$(echo "$last" | sed -nE 's/.* ft: ([0-9]+).*/\1/p')
  crashes=$(echo "$last" | sed -nE 's#.*oom/timeout/crash: ([0-9]+/[0-9]+/[0-9]+).*#\1#p')
  rows+=("$(printf '%-13s %12s %7s %7s %14s %9s' "$t" "${execs:-?}" "${cov:-?}" "${ft:-?}" "${crashes:-?}" "$new")")
  echo "fuzz: $t done (${execs:-?} executions, $new new findings; log $log)"
done
echo
printf '%-13s %12s %7s %7s %14s %9s\n' target executions cov ft oom/tmout/crash new-files
for r in "${rows[@]}"; do echo "$r"; done
if [ "$found" = 1 ]; then
  echo "fuzz: findings saved under $out/findings/ (reproduce: $build/fuzz/fuzz_<target> FILE)"
  exit 1
fi
