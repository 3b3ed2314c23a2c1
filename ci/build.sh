#!/usr/bin/env bash
# Configures and builds mtlgen from scratch in ./build (Ninja). Used by main-job.sh and test.sh.
# Usage: ci/build.sh [TARGET...]   (default: everything, tests included)
# -O1 without debug information: the tool's own code orchestrates (libclang, g++ and the simulated
# kernels do the heavy work), and builds 40% faster than at -O2 on CI's two cores; the simulator's
# runtime and the benchmarks ask for -O2 themselves (generator/sim, bench/), and the test suites that
# only assert around library calls build at -O0 (tests/CMakeLists.txt). Nothing run here reads the
# tool's own line tables (the simulator's modules carry theirs, sim_module.cpp). Set
# MTLGEN_BUILD_TYPE=RelWithDebInfo for a build to debug.
set -euo pipefail
cd "$(dirname "$0")/.."
build_type=${MTLGEN_BUILD_TYPE:-Release}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="$build_type" -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG"
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build build --parallel "$(nproc)" "${targets[@]}"
