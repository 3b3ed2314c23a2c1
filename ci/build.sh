#!/usr/bin/env bash
# Configures and builds mtlgen from scratch in ./build (Ninja). Used by main-job.sh and test.sh.
# Usage: ci/build.sh [TARGET...]   (default: everything, tests included)
# -O2 as RelWithDebInfo, without its debug information: the build is about a third faster on CI's
# two cores, and nothing run here reads the tool's own line tables (the simulator's modules carry
# theirs, sim_module.cpp). Set MTLGEN_BUILD_TYPE=RelWithDebInfo for a build to debug.
set -euo pipefail
cd "$(dirname "$0")/.."
build_type=${MTLGEN_BUILD_TYPE:-Release}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="$build_type" -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG"
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build build --parallel "$(nproc)" "${targets[@]}"
