#!/usr/bin/env bash
# The main job: install dependencies, build, regenerate the shipped kernel library into out/,
# then run every kernel variant and test case in the Linux simulator against its reference.
set -euo pipefail
cd "$(dirname "$0")/.."
ci/install-deps.sh
ci/build.sh mtlgen  # only what the main job runs
# One cache for both steps, in the build tree: `generate` keeps libclang's verdicts on the library
# (over a minute on two cores) and `verify` reads them instead of parsing every kernel again;
# the simulator's modules stay there for the next run.
export MTLGEN_CACHE_DIR="$PWD/build/mtlgen-cache"
build/generator/cli/mtlgen generate specs -o out
build/generator/cli/mtlgen verify specs --variant all
