#!/usr/bin/env bash
# scripts/model-report.sh on the two smallest models (their ctests, model_tiny_int8_cnn and
# model_oww_hello_deepa, run first and leave them in the cache): each row passes, the smallest
# also with --rtl; and the report fails when a bound is out of reach (--min-cosine 1), so a
# passing row means something.
#   report_smoke.sh NPUFORGE_BIN WORK_DIR
set -euo pipefail
npuforge=${1:?usage: report_smoke.sh NPUFORGE_BIN WORK_DIR}
work=${2:?usage: report_smoke.sh NPUFORGE_BIN WORK_DIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ "${NPUFORGE_SKIP_MODEL_TESTS:-0}" = 1 ]; then
  echo "SKIPPED model_report_smoke: NPUFORGE_SKIP_MODEL_TESTS=1"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work"
fails=0
rc=0
bash "$root/scripts/model-report.sh" --npuforge "$npuforge" --only tiny_int8_cnn,oww_hello_deepa \
  --rtl tiny_int8_cnn --work "$work/ok" > "$work/ok.txt" 2>&1 || rc=$?
cat "$work/ok.txt"
[ "$rc" -eq 0 ] || { echo "FAIL: the report exited $rc"; fails=$((fails + 1)); }
grep -qE '^\| tiny_int8_cnn \|.*\| 2/2 \| pass \(--rtl: clean, bit-exact\) \|$' "$work/ok.txt" \
  || { echo "FAIL: no passing tiny_int8_cnn row with its --rtl run"; fails=$((fails + 1)); }
grep -qE '^\| oww_hello_deepa \| 77856 \| 3/2 \|.*\| pass \|$' "$work/ok.txt" \
  || { echo "FAIL: no passing oww_hello_deepa row (77856 MACs, 3 NPU and 2 CPU segments)"; fails=$((fails + 1)); }
rc=0
bash "$root/scripts/model-report.sh" --npuforge "$npuforge" --only tiny_int8_cnn --min-cosine 1 \
  --work "$work/strict" > "$work/strict.txt" 2>&1 || rc=$?
[ "$rc" -eq 1 ] && grep -qE '^\| tiny_int8_cnn \|.*\| FAIL \|$' "$work/strict.txt" \
  || { echo "FAIL: --min-cosine 1 did not fail the int8 model (exit $rc):"; cat "$work/strict.txt"; fails=$((fails + 1)); }
[ "$fails" -eq 0 ] && echo "model_report_smoke: all checks passed"
[ "$fails" -eq 0 ]
