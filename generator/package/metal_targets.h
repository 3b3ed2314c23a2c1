#pragma once
// What a Metal Shading Language version asks of the Mac that compiles and runs it: the oldest
// macOS that runs it (-mmacosx-version-min) and the oldest Xcode whose compiler accepts it.
#include <optional>
#include <string>
#include <vector>

#include "ir/kernel.h"

namespace mtlgen::package {

struct MetalTarget {
  std::string msl_version;  // "3.1"
  std::string min_macos;    // "14.0"
  std::string min_xcode;    // "15"
};

// nullopt for a version this table does not know (validation admits only versions it does).
std::optional<MetalTarget> metal_target(const std::string& msl_version);

// The host glue (Objective-C++ runtime) needs macOS 14 whatever the kernels need.
inline constexpr const char* kGlueMinMacos = "14.0";

// The newest of the glue's macOS and every kernel's: what the package as a whole needs.
std::string package_min_macos(const std::vector<ir::Kernel>& kernels);

// Compares dotted versions numerically ("10.15" < "11.0"); negative, zero or positive.
int compare_versions(const std::string& a, const std::string& b);

}  // namespace mtlgen::package
