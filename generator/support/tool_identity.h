#pragma once
// What cache entries are keyed by besides their inputs: the running program's build.
#include <string>

namespace mtlgen::support {

// The version and this executable's size, modification time and inode, so that a rebuilt mtlgen
// (even at the same version), or another program linking the same stages, has entries of its own.
std::string tool_identity();

// The version and a hash of mtlgen's sources (generator/, templates/) taken when it was built: the
// same for every program built from one tree, mtlgen and the test programs alike. For verdicts
// that follow from those sources alone (libclang's on emitted code), so that one program's pass
// serves the others.
std::string sources_identity();

}  // namespace mtlgen::support
