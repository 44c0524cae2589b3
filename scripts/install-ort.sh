#!/usr/bin/env bash
# Installs onnxruntime-node (pinned by scripts/ort/package-lock.json) into a cache outside the
# source tree, for scripts/ort/run.js. Idempotent: a cache whose lock matches is left alone.
#   scripts/install-ort.sh [DIR]   (default ${NPUFORGE_ORT_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/npuforge/ort})
# ONNXRUNTIME_NODE_INSTALL=skip: the package's postinstall would download extra (GPU) binaries
# from a host we cannot reach; the CPU library ships inside the package.
set -euo pipefail
src=$(cd "$(dirname "$0")/ort" && pwd)
dir=${1:-${NPUFORGE_ORT_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/npuforge/ort}}
command -v npm >/dev/null || { echo "install-ort: npm not found (apt-get install npm)" >&2; exit 1; }
mkdir -p "$dir"
# Parallel callers (ctest -j) share one install: serialise on a lock file.
exec 9>"$dir/.install.lock"
flock 9
stamp="$dir/.lock.sha256"
want=$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -d "$dir/node_modules/onnxruntime-node" ]; then
  echo "install-ort: onnxruntime-node already installed in $dir"
  exit 0
fi
cp "$src/package.json" "$src/package-lock.json" "$dir/"
start=$(date +%s)
(cd "$dir" && ONNXRUNTIME_NODE_INSTALL=skip npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
echo "$want" > "$stamp"
echo "install-ort: onnxruntime-node $(node -p "require('$dir/node_modules/onnxruntime-node/package.json').version") installed in $dir in $(( $(date +%s) - start )) s"
