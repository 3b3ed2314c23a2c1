#include "package/metal_targets.h"

#include <algorithm>
#include <sstream>

namespace mtlgen::package {

namespace {

// From Apple's Metal Shading Language Specification (version history) and the Xcode release
// notes: the macOS release that introduced each version and the Xcode whose compiler accepts it.
const std::vector<MetalTarget>& table() {
  static const std::vector<MetalTarget> targets = {
      {"2.3", "11.0", "12"}, {"2.4", "12.0", "13"}, {"3.0", "13.0", "14"},
      {"3.1", "14.0", "15"}, {"3.2", "15.0", "16"}, {"4.0", "26.0", "26"},
  };
  return targets;
}

std::vector<int> parts(const std::string& version) {
  std::vector<int> out;
  std::stringstream s(version);
  std::string item;
  while (std::getline(s, item, '.')) out.push_back(item.empty() ? 0 : std::stoi(item));
  return out;
}

}  // namespace

std::optional<MetalTarget> metal_target(const std::string& msl_version) {
  for (const auto& t : table()) {
    if (t.msl_version == msl_version) return t;
  }
  return std::nullopt;
}

int compare_versions(const std::string& a, const std::string& b) {
  std::vector<int> x = parts(a), y = parts(b);
  size_t n = std::max(x.size(), y.size());
  x.resize(n);
  y.resize(n);
  return x < y ? -1 : (x == y ? 0 : 1);
}

std::string package_min_macos(const std::vector<ir::Kernel>& kernels) {
  std::string newest = kGlueMinMacos;
  for (const auto& k : kernels) {
    auto t = metal_target(k.msl_version);
    if (t && compare_versions(t->min_macos, newest) > 0) newest = t->min_macos;
  }
  return newest;
}

}  // namespace mtlgen::package
