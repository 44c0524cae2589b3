#!/usr/bin/env bash
# Cross-compiler determinism: builds the generator and its golden test with clang++-14 and checks
# seeds 1-100 of every shipped profile (400 programs, five files each) against
# tests/data/gen_golden/, the digests the GCC build's ctest checks too. So a pass here and in the
# GCC ctest means both compilers write the same bytes.
#   scripts/determinism.sh                 # own plain Release build (build-clang)
#   scripts/determinism.sh --in-fuzz-build # reuse the Clang build scripts/fuzz.sh made (CI)
# Environment: CLANG_BUILD_DIR (default build-clang), FUZZ_BUILD_DIR (default build-fuzz),
# JOBS (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-2}
if [ "${1:-}" = --in-fuzz-build ]; then
  build=${FUZZ_BUILD_DIR:-build-fuzz}
  if [ ! -f "$build/CMakeCache.txt" ]; then
    echo "determinism: $build is not configured; run scripts/fuzz.sh first" >&2
    exit 2
  fi
elif [ -n "${1:-}" ]; then
  echo "determinism: unknown argument '$1' (expected nothing or --in-fuzz-build)" >&2
  exit 2
else
  build=${CLANG_BUILD_DIR:-build-clang}
  cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=Release -DNPUFORGE_BENCH=OFF \
    -DNPUFORGE_DIRS="util;isa;allocator;planner;gen;tests" -DNPUFORGE_TEST_DIRS="gen" >/dev/null
fi
cmake --build "$build" -j "$jobs" --target gen_golden_test
# ctest runs the four profiles' cases side by side (gen_golden_test alone runs them one by one).
ctest --test-dir "$build" -R '^(Gen/GoldenProfile|GenGolden)\.' -j "$jobs" --output-on-failure
echo "determinism: clang++-14 build ($build) matches the golden digests (400 seeds x 5 files)"
