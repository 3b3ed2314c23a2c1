#!/usr/bin/env bash
# Loads the report pages in a real headless browser (Debian's chromium-headless-shell or chromium):
# each must load, every chart it creates must render (the page counts them in
# body[data-charts-rendered]), and no error may reach the console. The first page (counters on):
# argmax's sweep must draw the two --measured datasets. The second (families, no counters, so
# that it counts nothing): argmax_two_stage and decode_layer must draw their split by dispatch
# beside the H200's three measured splits (argmax_two_stage at one case, decode_layer at two).
# Exits 77 (skipped, one line) when no browser is installed.
# Usage: page_test.sh MTLGEN SOURCE_DIR WORK_DIR CACHE_DIR
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
"$mtlgen" report specs/argmax_two_stage.yaml specs/decode_layer.yaml -o "$work/families" --no-counters \
  --measured tests/report/measured/h200_family_bench.json --quiet 2>>"$work/lints.txt"

status=0
# check_page NAME MIN_SECTIONS MEASURED_DATASETS MEASURED_SPLITS: loads $work/NAME/index.html.
check_page() {
  local name=$1 min_sections=$2 want_measured=$3 want_splits=$4 dir="$work/$1"
  local flags=(--headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$work/profile"
               --enable-logging=stderr --v=0 --virtual-time-budget=15000)
  "$browser" "${flags[@]}" --dump-dom "file://$dir/index.html" >"$dir/dom.html" 2>"$dir/browser.log" || {
    echo "the browser failed on $name:"; cat "$dir/browser.log"; status=1; return; }
  local body expected rendered errors measured splits sections
  body=$(grep -o '<body[^>]*>' "$dir/dom.html" || true)
  expected=$(sed -n 's/.*data-charts-expected="\([0-9]*\)".*/\1/p' <<<"$body")
  rendered=$(sed -n 's/.*data-charts-rendered="\([0-9]*\)".*/\1/p' <<<"$body")
  errors=$(sed -n 's/.*data-errors="\([0-9]*\)".*/\1/p' <<<"$body")
  measured=$(sed -n 's/.*data-measured-drawn="\([0-9]*\)".*/\1/p' <<<"$body")
  splits=$(sed -n 's/.*data-measured-splits="\([0-9]*\)".*/\1/p' <<<"$body")
  sections=$(grep -o '<section id="k-' "$dir/dom.html" | wc -l)
  echo "$name: $sections kernel sections, $rendered of $expected charts rendered, $measured measured datasets," \
       "$splits measured splits, $errors page errors"
  if [[ -z "$expected" || "$expected" -lt 4 ]]; then echo "FAIL: the page created too few charts ($expected)"; status=1; fi
  if [[ "$rendered" != "$expected" ]]; then echo "FAIL: $rendered of $expected charts rendered"; status=1; fi
  if [[ "$measured" != "$want_measured" ]]; then echo "FAIL: $measured measured datasets drawn, expected $want_measured"; status=1; fi
  if [[ "$splits" != "$want_splits" ]]; then echo "FAIL: $splits measured splits drawn, expected $want_splits"; status=1; fi
  if [[ "$errors" != "0" ]]; then echo "FAIL: the page reported errors:"; grep -o '<p id="errors"[^<]*' "$dir/dom.html"; status=1; fi
  if [[ "$sections" -lt "$min_sections" ]]; then echo "FAIL: expected a section per kernel ($min_sections), found $sections"; status=1; fi
  if grep -E 'CONSOLE|Uncaught' "$dir/browser.log"; then echo "FAIL: console messages above"; status=1; fi
}
# argmax's sweep: the M3 Max tuning file and the H200 bench file.
check_page report 6 2 0
# Two families and their 11 members; the family sections' tables.
check_page families 13 0 3
if ! grep -q '<h3>decode_layer_f32 at case qwen3_1p7b_ctx4096' "$work/families/dom.html"; then
  echo "FAIL: no split table for decode_layer at context 4,096"; status=1
fi
exit $status
