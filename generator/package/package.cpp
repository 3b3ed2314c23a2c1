#include "package/package.h"

#include <algorithm>
#include <iterator>
#include <regex>

#include "package/archive.h"
#include "package/package_manifest.h"
#include "package/recipes.h"

namespace mtlgen::package {

namespace {

// Files of `generate` that the package replaces with its own.
bool replaced(const std::string& path) { return path == "CMakeLists.txt" || path == "manifest.json"; }

}  // namespace

std::string name_problem(const std::string& name) {
  static const std::regex ok("[A-Za-z][A-Za-z0-9_-]{0,63}");
  if (std::regex_match(name, ok)) return {};
  return "--name must start with a letter and hold only letters, digits, `_` and `-` (at most 64), not `" + name + "`";
}

std::string version_problem(const std::string& version) {
  static const std::regex ok("[0-9][0-9A-Za-z.+_]{0,31}");
  if (std::regex_match(version, ok)) return {};
  return "--version must start with a digit and hold only letters, digits, `.`, `+` and `_` (at most 32), not `" +
         version + "`";
}

Package build(const std::vector<ir::Kernel>& kernels, const support::OutputSet& generated, const Options& options) {
  // The kernels whose MSL mtlgen wrote (not hand-written `source:` ones).
  std::vector<ir::Kernel> metal;
  std::copy_if(kernels.begin(), kernels.end(), std::back_inserter(metal), [&](const ir::Kernel& k) {
    return generated.files().count(k.name + "/" + k.name + ".metal") > 0;
  });
  Package p;
  p.root = options.name + "-" + options.version;
  p.archive_name = p.root + "-metal.tar.gz";
  for (const auto& [path, content] : generated.files()) {
    if (!replaced(path)) p.files[path] = content;
  }
  add_recipes(metal, options, p.files);
  p.executables = {kDoctorPath};
  ManifestInput in{options.name, options.version, generated.files().at("manifest.json"), &p.files, &p.executables};
  std::string manifest = package_manifest(kernels, in);
  p.files["manifest.json"] = std::move(manifest);
  p.archive = deterministic_tar_gz(p.root, p.files, p.executables);
  return p;
}

support::OutputSet outputs(const Package& package) {
  support::OutputSet out;
  for (const auto& [path, content] : package.files) out.add(package.root + "/" + path, content);
  out.add(package.archive_name, package.archive);
  return out;
}

}  // namespace mtlgen::package
