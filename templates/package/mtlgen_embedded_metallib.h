#pragma once
// The metallib linked into the binary (CMake: -DMTLGEN_EMBED_METALLIB=ON, target
// mtlgen::embedded_metallib; make: EMBED=1), so an app needs no file beside it:
//   [MTGKernelLibrary libraryWithDevice:device bytes:mtlgen::embedded_metallib()
//                                length:mtlgen::embedded_metallib_size() error:&error]
#include <cstddef>

namespace mtlgen {

const unsigned char* embedded_metallib();
std::size_t embedded_metallib_size();

}  // namespace mtlgen
