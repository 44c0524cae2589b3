#!/usr/bin/env bash
# Installs what is needed, builds npuforge, and runs the main job on the built-in defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DNPUFORGE_BENCH=OFF
cmake --build "$build" -j "$(nproc)" --target npuforge
"$build"/tools/npuforge demo
