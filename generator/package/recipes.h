#pragma once
// The package's build and check files, rendered from templates/package: CMakeLists.txt, Makefile,
// doctor.sh, the CI job, the embedded-metallib source and the manifest's schema.
#include <map>
#include <string>
#include <vector>

#include "ir/kernel.h"
#include "package/package.h"

namespace mtlgen::package {

// Adds the recipes for `kernels` (those whose MSL mtlgen writes) to `files`.
void add_recipes(const std::vector<ir::Kernel>& kernels, const Options& options, std::map<std::string, std::string>& files);

inline constexpr const char* kDoctorPath = "doctor.sh";
inline constexpr const char* kSchemaPath = "manifest.schema.json";

}  // namespace mtlgen::package
