#!/usr/bin/env bash
# Imports one real kernel file of ../shared/corpus, unmodified, and holds the result to the record
# in expected_unreadable.txt: the number of kernels import could not read (0 is the goal; a
# change in either direction fails, so progress updates the record and a regression is seen).
# Then `check` on the skeletons must report nothing but their TODOs.
# Usage: import_file.sh MTLGEN CORPUS_DIR RELATIVE_FILE OUT_DIR [-I DIR relative to CORPUS_DIR]...
set -uo pipefail
mtlgen=$1 corpus=$2 file=$3 out=$4
shift 4
if [[ ! -d "$corpus" ]]; then
  echo "corpus: skipped: $corpus is absent (third-party kernel files are read there, never copied)"
  exit 77
fi
includes=()
while (( $# )); do includes+=(-I "$corpus/$2"); shift 2; done
record="$(dirname "$0")/expected_unreadable.txt"
expected=$(awk -v f="$file" '$1 == f { print $2 }' "$record")
[[ -n "$expected" ]] || { echo "no record for $file in $record"; exit 1; }

rm -rf "$out" && mkdir -p "$out"
"$mtlgen" import "$corpus/$file" "${includes[@]}" -o "$out" -q 2> "$out.err"
status=$?
unreadable=$(grep -c "could not be read" "$out.err")
skeletons=$(find "$out" -name '*.yaml' | wc -l)
echo "$file: $skeletons skeletons, $unreadable kernels unreadable (recorded: $expected), exit $status"
if (( status != 0 && unreadable == 0 )) || (( status == 0 && unreadable != 0 )) || (( status > 1 )); then
  cat "$out.err"; echo "exit status $status does not say whether kernels were skipped"; exit 1
fi
if (( unreadable != expected )); then
  grep "could not be read" "$out.err"
  echo "the number of unreadable kernels changed: update $record if this is progress"
  exit 1
fi
if (( skeletons == 0 )); then
  (( unreadable > 0 )) || { echo "no skeleton written and no kernel listed as unreadable"; exit 1; }
  exit 0  # every kernel of the file is unreadable (recorded): nothing to check
fi
"$mtlgen" check "$out" "${includes[@]}" > "$out.check" 2>&1
if grep "error:" "$out.check" | grep -qv "is still a TODO"; then
  grep "error:" "$out.check" | grep -v "is still a TODO" | head -20
  echo "check reported more than the skeletons' TODOs"; exit 1
fi
exit 0
