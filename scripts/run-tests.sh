#!/usr/bin/env bash
# Installs what is needed, builds, and runs every test with ctest.
# Environment: BUILD_DIR (default build), NPUFORGE_SANITIZE=ON for an ASan/UBSan build,
# JOBS (default: number of cores), NPUFORGE_SKIP_MODEL_TESTS=1 to skip the real-model tests
# (offline work; they need the npm registry), CTEST_ARGS (extra ctest arguments).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# The real-model tests (tests/models): torch to export models, node/npm for onnxruntime.
[ "${NPUFORGE_SKIP_MODEL_TESTS:-0}" = 1 ] || bash scripts/install-model-deps.sh
build=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}
sanitize=${NPUFORGE_SANITIZE:-OFF}
type=RelWithDebInfo
[ "$sanitize" = ON ] && type=Debug
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=$type -DNPUFORGE_SANITIZE="$sanitize" -DNPUFORGE_BENCH="${NPUFORGE_BENCH:-ON}"
cmake --build "$build" -j "$jobs"
# Models and onnxruntime fetched once, before the tests run in parallel.
bash scripts/prepare-models.sh
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:detect_stack_use_after_return=0}
# SystemC frees the coroutine stacks of its processes when a simulation ends, and LeakSanitizer
# can then take a freed one for the main thread's stack and crash scanning it at exit ("Tracer
# caught signal 11"; intermittent, it depends on the address space). Stacks are not leak roots
# here: every program returns from main (no exit() with live locals, no death tests).
export LSAN_OPTIONS=${LSAN_OPTIONS:-use_stacks=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# shellcheck disable=SC2086  # CTEST_ARGS is a list of arguments
ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 900 ${CTEST_ARGS:-}
