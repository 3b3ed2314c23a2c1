#pragma once
// The package's manifest.json: the generated manifest's kernels (entry points, bindings, dispatch
// formulas, tunables and their defaults, variants) each with the Metal target it needs, plus the
// size and sha256 of every other file of the package. Its JSON Schema is
// templates/package/manifest.schema.json, shipped beside it.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/kernel.h"

namespace mtlgen::package {

inline constexpr const char* kManifestFormat = "mtlgen-package-1";

struct ManifestInput {
  std::string name;
  std::string version;
  std::string generated_manifest;                     // manifest.json as `mtlgen generate` wrote it
  const std::map<std::string, std::string>* files;    // every file of the package but the manifest
  const std::set<std::string>* executables;
};

std::string package_manifest(const std::vector<ir::Kernel>& kernels, const ManifestInput& in);

// 64 lowercase hex digits.
std::string sha256_hex(const std::string& bytes);

}  // namespace mtlgen::package
