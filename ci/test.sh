#!/usr/bin/env bash
# The whole test suite: install dependencies, build from scratch, run CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
ci/install-deps.sh
ci/build.sh
# One cache for the whole suite, in the build tree: test processes share compiled simulator modules
# and libclang's verdicts on the shipped library instead of each paying for them again. It is the
# directory the CLI tests pass to verify and report as --cache-dir (tests/verify, tests/report).
export MTLGEN_CACHE_DIR="$PWD/build/mtlgen-cache"
ctest --test-dir build --output-on-failure --parallel "$(nproc)" --timeout 900
