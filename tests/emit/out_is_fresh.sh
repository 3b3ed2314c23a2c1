#!/usr/bin/env bash
# Fails when the committed out/ differs from a fresh `mtlgen generate specs` (stale or hand-edited).
set -euo pipefail
mtlgen="$1"
fresh="$(mktemp -d)"
trap 'rm -rf "$fresh"' EXIT
"$mtlgen" generate specs -o "$fresh" -q
if ! diff -r "$fresh" out; then
  echo "out/ is stale: run \`build/generator/cli/mtlgen generate specs -o out\` and commit the result" >&2
  exit 1
fi
echo "out/ matches specs/"
