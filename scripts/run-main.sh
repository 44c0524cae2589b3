#!/usr/bin/env bash
# Installs what is needed, builds npuforge, and runs the main job on the built-in defaults:
# a handful of seeds of the default profile generated, simulated (SystemC/TLM) and checked,
# one row per seed, with coverage and JUnit XML under results/main.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# The same build type and folder as scripts/run-tests.sh, so that either command after the other
# rebuilds nothing it has already built (only the npuforge target is built here).
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j "$(nproc)" --target npuforge
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
"$build"/tools/npuforge regress --profile configs/gen/default.yaml --seeds 1-8 --per-seed --out results/main
