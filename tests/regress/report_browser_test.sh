#!/usr/bin/env bash
# The HTML report in a real browser: a regression with one planted allocator bug, index.html
# loaded by headless Chromium from the file (no server), a screenshot that must be a non-empty
# PNG, and the DOM after the page's script ran must hold the failing seed, its reproduction
# command and the seed table rows the script renders.
# Usage: report_browser_test.sh NPUFORGE SOURCE_DIR. Exit 77 = skipped (no chromium).
# NPUFORGE_REPORT_PNG=path keeps the screenshot.
set -uo pipefail
npuforge=$1
src=$2
fail() { echo "FAIL: $*"; exit 1; }
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
  echo "SKIPPED: no chromium on PATH (Debian package chromium)"
  [ "${NPUFORGE_REQUIRE_CHROMIUM:-0}" = 1 ] && fail "NPUFORGE_REQUIRE_CHROMIUM=1 but chromium is missing"
  exit 77
fi
d=$(mktemp -d /tmp/npuforge-report-test.XXXXXX)
trap 'rm -rf "$d"' EXIT
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
cat > "$d/list.yaml" <<YAML
defaults: {length: 200}
runs:
  - {name: default, profile: $src/configs/gen/default.yaml, seeds: 1-30}
  - {name: planted, profile: $src/configs/gen/default.yaml, seeds: 7, plant: gen-overlap-live}
  - {name: tiny-buffers, profile: $src/configs/gen/tiny-buffers.yaml, seeds: 1-10}
YAML
"$npuforge" regress "$d/list.yaml" -j 2 -q --out "$d/results" > "$d/run.out" 2>&1
rc=$?
[ $rc = 1 ] || { cat "$d/run.out"; fail "regression exit $rc, expected 1 (one planted failure)"; }
[ "$(wc -l < "$d/results/failures.txt")" = 1 ] || fail "expected exactly one failing seed"
repro=$(cat "$d/results/failures.txt")

chrome() {
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars --no-first-run \
    --user-data-dir="$d/profile" "$@" "file://$d/results/index.html" 2> "$d/chrome.err"
}
chrome --window-size=1300,2400 --screenshot="$d/report.png" > /dev/null || { tail "$d/chrome.err"; fail "screenshot failed"; }
[ -s "$d/report.png" ] || fail "no screenshot"
[ "$(head -c 8 "$d/report.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "the screenshot is not a PNG"
size=$(stat -c %s "$d/report.png")
[ "$size" -gt 20000 ] || fail "the screenshot is only $size bytes (blank page?)"
[ -n "${NPUFORGE_REPORT_PNG:-}" ] && cp "$d/report.png" "$NPUFORGE_REPORT_PNG"

chrome --dump-dom > "$d/dom.html" || { tail "$d/chrome.err"; fail "--dump-dom failed"; }
grep -q 'planted:7' "$d/dom.html" || fail "the failing seed planted:7 is not in the DOM"
grep -qF "$repro" "$d/dom.html" || fail "the repro line is not in the DOM: $repro"
grep -q 'copyRepro(this)' "$d/dom.html" || fail "no copy button"
# Rendered by the page's script from the embedded JSON: proof the script ran.
[ "$(grep -o '<tr class="pass">' "$d/dom.html" | wc -l)" = 40 ] || fail "the seed table was not rendered (40 passing rows)"
grep -q '<tr class="fail">' "$d/dom.html" || fail "the seed table lacks the failing row"
grep -q '41 of 41 seeds' "$d/dom.html" || fail "the seed count is not shown"
echo "PASS: screenshot $size bytes; failing seed, repro line and seed table in the DOM"
