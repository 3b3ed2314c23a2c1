#pragma once
// What cache entries are keyed by besides their inputs: the running program's build.
#include <string>

namespace mtlgen::support {

// The version and this executable's size, modification time and inode, so that a rebuilt mtlgen
// (even at the same version), or another program linking the same stages, has entries of its own.
std::string tool_identity();

}  // namespace mtlgen::support
