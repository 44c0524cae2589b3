#!/usr/bin/env bash
# Cross-compiler determinism: builds the generator and its golden test with clang++-14 (a plain
# Release build, no sanitizers) and checks seeds 1-100 of every shipped profile (400 programs,
# five files each) against tests/data/gen_golden/, the digests the GCC build's ctest checks too.
# So a pass here and in the GCC ctest means both compilers write the same bytes.
#   scripts/determinism.sh
# Environment: CLANG_BUILD_DIR (default build-clang), JOBS (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${CLANG_BUILD_DIR:-build-clang}
jobs=${JOBS:-2}
cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=Release -DNPUFORGE_BENCH=OFF \
  -DNPUFORGE_DIRS="util;isa;allocator;planner;gen;tests" -DNPUFORGE_TEST_DIRS="gen" >/dev/null
cmake --build "$build" -j "$jobs" --target gen_golden_test
"$build/tests/gen/gen_golden_test" --gtest_brief=1
echo "determinism: clang++-14 build matches the golden digests (400 seeds x 5 files)"
