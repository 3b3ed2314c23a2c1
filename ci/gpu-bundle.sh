#!/bin/bash
# Packs a built mtlgen for a machine with an NVIDIA GPU that has the CUDA toolkit but not mtlgen's
# Debian libraries (and perhaps no network): `mtlgen verify --gpu cuda` and `mtlgen bench --gpu
# cuda` there (docs/gpu.md). Writes into BUNDLE (default .gpu, listed in .git/info/exclude):
#   mtlgen, libmtlgen_simrt.so   the tool, stripped
#   libs.tar.xz                  every shared library they load except glibc's own, and libclang's
#                                builtin headers (the MSL front end parses with them)
#   run.sh                       on the GPU machine: `BUNDLE/run.sh mtlgen verify specs --gpu cuda`
# Copy BUNDLE beside a checkout of the same commit (the specs) and run run.sh from the checkout.
# Usage: ci/gpu-bundle.sh [BUILD_DIR (build)] [BUNDLE (.gpu)]
set -euo pipefail
build=${1:-build}
bundle=${2:-.gpu}
tool=$build/generator/cli/mtlgen
simrt=$build/generator/sim/libmtlgen_simrt.so
if [ ! -x "$tool" ] || [ ! -f "$simrt" ]; then
  echo "gpu-bundle: build $tool first (ninja -C $build mtlgen)" >&2
  exit 1
fi

rm -rf "$bundle" && mkdir -p "$bundle"
strip -o "$bundle/mtlgen" "$tool"
strip --strip-unneeded -o "$bundle/libmtlgen_simrt.so" "$simrt"

# The libraries, resolved through symlinks, under their sonames; glibc's own stay behind (the GPU
# machine's loader must match its C library).
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib"
ldd "$tool" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r soname path; do
  case $soname in
    libc.so.*|libm.so.*|libdl.so.*|librt.so.*|libpthread.so.*|ld-linux*|libmtlgen_simrt.so) continue ;;
  esac
  strip --strip-unneeded -o "$stage/lib/$soname" "$(readlink -f "$path")"
done
# Debian's libclang reads its builtin headers (stddef.h, float.h, ...) from
# /usr/include/clang/<version>/include, which the GPU machine may lack: carried as lib/clang.
for include in /usr/include/clang/*/include; do
  [ -d "$include" ] || continue
  version=$(basename "$(dirname "$include")")
  mkdir -p "$stage/lib/clang/$version"
  cp -rL "$include" "$stage/lib/clang/$version/include"
done
[ -d "$stage/lib/clang" ] || { echo "gpu-bundle: no /usr/include/clang/<version>/include (libclang-14-dev)" >&2; exit 1; }
tar -C "$stage" -cf - lib | xz -9 -T0 > "$bundle/libs.tar.xz"

cat > "$bundle/run.sh" <<'RUN'
#!/bin/bash
# Written by ci/gpu-bundle.sh. On the GPU machine, from a checkout: BUNDLE/run.sh mtlgen <args>
# (or any command; mtlgen is on PATH). The carried libraries fill only what the machine lacks: a
# library it has under the same soname is its own (nvcc and the host compiler load them too).
set -o pipefail
G=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
L=${MTLGEN_BUNDLE_LIBS:-/tmp/mtlgen-bundle}/lib
if [ ! -f "$L/.unpacked" ]; then
  mkdir -p "$L" && tar -C "$L/.." -xJf "$G/libs.tar.xz"
  for f in "$L"/*.so*; do ldconfig -p | grep -q "/$(basename "$f")\$" && rm -f "$f"; done
  # libclang's builtin headers, where Debian's libclang-14 looks for them (it needs root here).
  for v in "$L"/clang/*; do
    u=/usr/include/clang/$(basename "$v")
    [ -d "$u/include" ] || { mkdir -p "$u" && ln -sfn "$v/include" "$u/include"; }
  done
  touch "$L/.unpacked"
  echo "gpu bundle: carried libraries in use: $(cd "$L" && for f in *.so*; do [ -e "$f" ] && printf '%s ' "$f"; done)" >&2
fi
export LD_LIBRARY_PATH=$L:$G${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$G:/usr/local/cuda/bin:$PATH
exec "$@"
RUN
chmod +x "$bundle/run.sh"
du -sh "$bundle"/* | sed 's/^/gpu-bundle: /'
echo "gpu-bundle: $(du -sb "$bundle" | cut -f1) bytes in $bundle (the run tool carries at most 64 MiB)"
