#!/usr/bin/env bash
# Loads the report page in a real headless browser (Debian's chromium-headless-shell or chromium):
# it must load, every chart it creates must render (the page counts them in
# body[data-charts-rendered]), argmax's sweep must draw the two --measured datasets, and no error
# may reach the console. Exits 77 (skipped, one line)
# when no browser is installed. Usage: page_test.sh MTLGEN SOURCE_DIR WORK_DIR CACHE_DIR
set -euo pipefail
mtlgen=$1 source_dir=$2 work=$3 cache=$4

browser=""
for candidate in chromium-headless-shell chromium; do
  if command -v "$candidate" >/dev/null; then browser=$(command -v "$candidate"); break; fi
done
if [[ -z "$browser" ]]; then
  echo "report page test skipped: no chromium-headless-shell or chromium on PATH (apt-get install chromium-headless-shell)"
  exit 77
fi

rm -rf "$work" && mkdir -p "$work"
cd "$source_dir"
"$mtlgen" report tests/advisor/specs specs/argmax.yaml specs/rms_norm.yaml -o "$work/report" \
  --measured tests/report/measured/m3max_tuning.json --measured tests/report/measured/h200_bench.json \
  --cache-dir "$cache" --quiet 2>"$work/lints.txt"

flags=(--headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$work/profile"
       --enable-logging=stderr --v=0 --virtual-time-budget=15000)
"$browser" "${flags[@]}" --dump-dom "file://$work/report/index.html" >"$work/dom.html" 2>"$work/browser.log" || {
  echo "the browser failed:"; cat "$work/browser.log"; exit 1; }

body=$(grep -o '<body[^>]*>' "$work/dom.html" || true)
expected=$(sed -n 's/.*data-charts-expected="\([0-9]*\)".*/\1/p' <<<"$body")
rendered=$(sed -n 's/.*data-charts-rendered="\([0-9]*\)".*/\1/p' <<<"$body")
errors=$(sed -n 's/.*data-errors="\([0-9]*\)".*/\1/p' <<<"$body")
measured=$(sed -n 's/.*data-measured-drawn="\([0-9]*\)".*/\1/p' <<<"$body")
sections=$(grep -o '<section id="k-' "$work/dom.html" | wc -l)
echo "page: $sections kernel sections, $rendered of $expected charts rendered, $measured measured datasets, $errors page errors"
status=0
if [[ -z "$expected" || "$expected" -lt 4 ]]; then echo "FAIL: the page created too few charts ($expected)"; status=1; fi
if [[ "$rendered" != "$expected" ]]; then echo "FAIL: $rendered of $expected charts rendered"; status=1; fi
# argmax's sweep: the M3 Max tuning file and the H200 bench file.
if [[ "$measured" != "2" ]]; then echo "FAIL: $measured measured datasets drawn, expected 2"; status=1; fi
if [[ "$errors" != "0" ]]; then echo "FAIL: the page reported errors:"; grep -o '<p id="errors"[^<]*' "$work/dom.html"; status=1; fi
if [[ "$sections" -lt 6 ]]; then echo "FAIL: expected a section per kernel (6), found $sections"; status=1; fi
if grep -E 'CONSOLE|Uncaught' "$work/browser.log"; then echo "FAIL: console messages above"; status=1; fi
exit $status
