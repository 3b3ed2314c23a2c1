#include "spec/library.h"

#include <fmt/format.h>

#include <algorithm>

#include "spec/front_end.h"
#include "spec/name_assigner.h"

namespace mtlgen::spec {

namespace fs = std::filesystem;
using support::ErrorKind;

namespace {

std::vector<fs::path> yaml_files_in(const std::string& dir, support::Diagnostics& diags) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") found.push_back(entry.path());
  }
  if (found.empty()) {  // else a typo'd directory would check nothing and succeed
    diags.error(ErrorKind::io, {dir}, "the directory holds no *.yaml spec files",
                "pass spec files, or a directory with `*.yaml` files directly inside it");
  }
  std::sort(found.begin(), found.end());
  return found;
}

// Adds `kernel` unless its name is taken: kernels share one output directory.
void add_kernel(std::vector<ir::Kernel>& kernels, const ir::Kernel& kernel, support::Diagnostics& diags) {
  auto same = std::find_if(kernels.begin(), kernels.end(), [&](const ir::Kernel& k) { return k.name == kernel.name; });
  if (same == kernels.end()) {
    kernels.push_back(kernel);
    return;
  }
  if (same->spec_path == kernel.spec_path && same->spec_hash == kernel.spec_hash) return;  // a borrowed kernel, again
  diags.error(ErrorKind::duplicate_name, kernel.name_loc,
              fmt::format("kernel `{}` is also defined in {}", kernel.name, same->spec_path),
              "kernel names must be unique across a library: their files share one output directory");
}

}  // namespace

std::vector<fs::path> collect_spec_files(const std::vector<std::string>& inputs, support::Diagnostics& diags) {
  std::vector<fs::path> specs;
  for (const auto& input : inputs) {
    std::error_code ec;
    if (fs::is_directory(input, ec)) {
      auto found = yaml_files_in(input, diags);
      specs.insert(specs.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(input, ec)) {
      specs.emplace_back(input);
    } else {
      diags.error(ErrorKind::io, {input}, "no such spec file or directory", "pass .yaml files or directories holding them");
    }
  }
  return specs;
}

std::string display_path(const fs::path& spec) {
  std::error_code ec;
  fs::path cwd = fs::current_path(ec);
  fs::path abs = fs::absolute(spec, ec).lexically_normal();
  fs::path rel = abs.lexically_relative(cwd);
  if (!rel.empty() && *rel.begin() != "..") return rel.generic_string();
  return spec.lexically_normal().generic_string();
}

std::vector<ir::Kernel> load_library(const std::vector<fs::path>& specs, support::Diagnostics& diags,
                                     const std::vector<std::string>& include_dirs) {
  std::vector<ir::Kernel> kernels;
  SpecLoader loader(diags, {}, include_dirs);  // a spec several families borrow from is loaded once
  for (const auto& path : specs) {
    auto kernel = loader.load(path.string(), display_path(path));
    if (!kernel) continue;
    if (kernel->is_family()) {
      for (const auto& m : kernel->family->kernels) add_kernel(kernels, m, diags);
    }
    add_kernel(kernels, *kernel, diags);
  }
  check_library_names(kernels, diags);
  return kernels;
}

}  // namespace mtlgen::spec
