#!/usr/bin/env bash
# The whole test suite: install dependencies, build from scratch, run CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
ci/install-deps.sh
ci/build.sh
ctest --test-dir build --output-on-failure --parallel "$(nproc)" --timeout 900
