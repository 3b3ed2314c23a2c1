#!/usr/bin/env bash
# Configures and builds mtlgen from scratch in ./build (Release, Ninja). Used by main-job.sh and test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build --parallel "$(nproc)"
