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

# chrome ARGS... [URL]: the report unless a file:// URL is given last.
chrome() {
  local url="file://$d/results/index.html"
  if [ $# -gt 0 ] && [[ "${!#}" == file://* ]]; then url=${!#}; set -- "${@:1:$#-1}"; fi
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars --no-first-run \
    --user-data-dir="$d/profile" "$@" "$url" 2> "$d/chrome.err"
}

# svg_of CLASS: the first <svg> of index.html whose class is CLASS, as a file of its own.
svg_of() {
  awk -v cls="class='$1' " 'index($0, cls) { on = 1; sub(/.*<svg /, "<svg ") } on { print } on && /<\/svg>/ { exit }' \
    "$d/results/index.html"
}

# red_share PNG: "RED TOTAL", the pixels of the screenshot PNG that are the report's red
# (#e53935, the faulting buffers' fill) and all its pixels, counted by Chromium in a canvas.
red_share() {
  { echo "<!DOCTYPE html><html><body><pre id='out'>pending</pre><script>"
    echo "function count(img){const c=document.createElement('canvas');c.width=img.naturalWidth;c.height=img.naturalHeight;"
    echo "const x=c.getContext('2d');x.drawImage(img,0,0);const p=x.getImageData(0,0,c.width,c.height).data;let red=0;"
    echo "for(let k=0;k<p.length;k+=4){if(p[k]>200&&p[k+1]<110&&p[k+2]<110)red++;}"
    echo "document.getElementById('out').textContent='share '+red+' '+(p.length/4)+' end';}</script>"
    echo "<img onload='count(this)' src='data:image/png;base64,$(base64 -w0 "$1")'></body></html>"
  } > "$d/count.html"
  chrome --virtual-time-budget=5000 --dump-dom "file://$d/count.html" | grep -o 'share [0-9]* [0-9]* end' | cut -d' ' -f2,3
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

# The failure's window: drawn first, the whole program one click away; in a screenshot of the
# window the faulting buffers are a large red area (drawn whole, they were a few pixels).
grep -q 'class="failure-window"' "$d/dom.html" || fail "the failing seed has no window of its failure"
grep -q "<summary>whole program</summary>" "$d/dom.html" || fail "the whole-program timeline is not one click away"
svg_of "memmap window" > "$d/window.svg"
svg_of memmap > "$d/whole.svg"
[ -s "$d/window.svg" ] && [ -s "$d/whole.svg" ] || fail "no window or whole-program SVG in index.html"
grep -q "(first finding)" "$d/window.svg" || fail "the window does not mark the finding's instruction"
faulting=$(grep -o "font-weight='bold'>[^<]*</text>" "$d/window.svg" | sed "s/.*'>//; s/<.*//" | sort -u)
[ -n "$faulting" ] || fail "the faulting buffers are not labelled in the window"
for b in $faulting; do grep -q "%$b" "$d/results/results.jsonl" || fail "labelled $b is not a buffer of the finding"; done
labels=$(grep -o "font-size='12'[^>]*>[^<]*</text>" "$d/window.svg" | wc -l)
[ "$labels" -ge 3 ] || fail "only $labels buffers labelled in the window (the faulting ones and their neighbours)"
chrome --window-size=1200,700 --screenshot="$d/window.png" "file://$d/window.svg" > /dev/null || fail "window screenshot failed"
chrome --window-size=1200,700 --screenshot="$d/whole.png" "file://$d/whole.svg" > /dev/null || fail "whole screenshot failed"
read -r wred wtotal <<< "$(red_share "$d/window.png")"
read -r ared atotal <<< "$(red_share "$d/whole.png")"
[ -n "$wred" ] && [ -n "$ared" ] || fail "the screenshots' pixels could not be counted"
echo "red pixels: window $wred of $wtotal, whole program $ared of $atotal"
[ $((wred * 100)) -ge "$wtotal" ] || fail "the faulting buffers are under 1% of the window's screenshot ($wred of $wtotal)"
[ "$wred" -gt $((ared * 4)) ] || fail "the window shows the failure no larger than the whole program ($wred vs $ared pixels)"
[ -n "${NPUFORGE_REPORT_PNG:-}" ] && cp "$d/window.png" "${NPUFORGE_REPORT_PNG%.png}.window.png"
echo "PASS: screenshot $size bytes; failing seed, repro line and seed table in the DOM; the failure's window" \
  "($faulting labelled, $wred red pixels against $ared drawn whole)"
