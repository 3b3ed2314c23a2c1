#!/usr/bin/env bash
# Installs exactly the Debian 12 packages mtlgen builds, tests and runs with.
# Idempotent: packages already installed are skipped; nothing is fetched when all are present.
# Usage: ci/install-deps.sh [--bench]   (--bench adds PoCL, the benchmark-only peer)
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  g++ clang
  libyaml-cpp-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev  # GTest's CMake config spans both
  libcli11-dev nlohmann-json3-dev libkainjow-mustache-dev
  libboost-context-dev
  libclang-dev libseccomp-dev  # the MSL front end; the verify sandbox
  libarchive-dev libssl-dev  # `mtlgen package`: the tar.gz, sha256 of every file
  libblocksruntime-dev  # blocks for the test that runs the generated Objective-C++ glue
  libjs-chart.js  # `mtlgen report` inlines Chart.js into its page
  chromium-headless-shell  # the report page's headless-browser test
  jq  # tests/corpus/verify_spec.sh reads verify's --json
)
if [[ "${1:-}" == "--bench" ]]; then
  packages+=(pocl-opencl-icd ocl-icd-opencl-dev opencl-headers)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if (( ${#missing[@]} == 0 )); then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

sudo_cmd=()
if (( EUID != 0 )); then sudo_cmd=(sudo); fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
