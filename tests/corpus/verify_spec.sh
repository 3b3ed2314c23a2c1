#!/usr/bin/env bash
# Verifies one filled spec of a real kernel (specs/, its `source:` in ../shared/corpus) as a user
# would, `mtlgen verify SPEC --races MODE`, and holds each case to what is known of the kernel:
# every case passes except those named CASE=FILE:LINE, real bugs of the kernel, which must fail
# (or crash) with a finding that names FILE:LINE (verify then exits 4, and that is expected), and
# those named warn:CASE=FILE:LINE, which must pass with a warning that names FILE:LINE.
# Usage: verify_spec.sh MTLGEN CORPUS_DIR SPEC MODE [CASE=FILE:LINE | warn:CASE=FILE:LINE]...
set -uo pipefail
mtlgen=$1 corpus=$2 spec=$3 mode=$4
shift 4
if [[ ! -d "$corpus" ]]; then
  echo "corpus: skipped: $corpus is absent (third-party kernel files are read there, never copied)"
  exit 77
fi
declare -A bugs=() warns=()
for b in "$@"; do
  if [[ $b == warn:* ]]; then b=${b#warn:}; warns[${b%%=*}]=${b#*=}; else bugs[${b%%=*}]=${b#*=}; fi
done
json=$(mktemp) && trap 'rm -f "$json"' EXIT
"$mtlgen" verify "$spec" --races "$mode" --json "$json" > "$json.out" 2>&1
status=$?
sed 's/ \[FC_[^]]*\]//' "$json.out"; rm -f "$json.out"  # a file's every function constant: noise here
(( status == 0 || status == 4 )) || { echo "verify exited $status"; exit 1; }
ran=$(jq 'length' "$json" 2>/dev/null)
(( ${ran:-0} > 0 )) || { echo "verify ran no case (exit $status)"; exit 1; }  # e.g. the module did not compile
failed=0
while IFS=$'\t' read -r case result findings warnings; do
  want=${bugs[$case]:-} warn=${warns[$case]:-}
  if [[ -n "$warn" && "$warnings" != *"$warn)"* ]]; then
    echo "case $case: expected a warning at $warn"; failed=1
  elif [[ -n "$warn" ]]; then
    echo "case $case: the warning is reported at $warn"
  fi
  if [[ -z "$want" && "$result" != PASS ]]; then
    echo "case $case: $result, expected PASS"; failed=1
  elif [[ -n "$want" && ( "$result" == PASS || "$findings" != *"$want)"* ) ]]; then
    echo "case $case: $result, expected a failure or crash with a finding at $want"; failed=1
  elif [[ -n "$want" ]]; then
    echo "case $case: the known bug is found at $want"
  fi
done < <(jq -r 'def messages: [.[].message] | join(" | ") | if . == "" then "-" else . end;  # read would join empty fields
                .[] | [.case, .status, (.problems | messages), (.warnings // [] | messages)] | @tsv' "$json")
for c in "${!bugs[@]}" "${!warns[@]}"; do
  jq -e --arg c "$c" 'any(.[]; .case == $c)' "$json" > /dev/null || { echo "no case $c was run"; failed=1; }
done
exit $failed
