#!/usr/bin/env bash
# libclang's precompiled headers kept in $MTLGEN_CACHE_DIR/libclang/: made by the first process
# that parses, taken by the next; one libclang refuses (here: cut short) is made again, and the
# parse does not notice.
set -euo pipefail
mtlgen=$1
spec=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export MTLGEN_CACHE_DIR=$dir
"$mtlgen" check "$spec" > /dev/null
made=("$dir"/libclang/*.pch)
[ "${#made[@]}" -eq 2 ] || { echo "expected the MSL and the C++ precompiled headers, found: ${made[*]}"; exit 1; }
for f in "${made[@]}"; do head -c 1000 "$f" > "$f.cut" && mv "$f.cut" "$f"; done
rm -rf "$dir/checked"  # the verdicts, so that the next check parses again
"$mtlgen" check "$spec"
for f in "${made[@]}"; do
  [ "$(stat -c %s "$f")" -gt 1000 ] || { echo "$f was not made again"; exit 1; }
done
