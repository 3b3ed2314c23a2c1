#pragma once
// The spec front end: a spec file in, a validated ir::Kernel out (or located diagnostics).
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/kernel.h"
#include "spec/yaml_reader.h"

namespace mtlgen::spec {

// Loads specs with one set of options, each spec once: a spec reached again (borrowed by several
// families, or named and borrowed too) is the kernel its first load made, and its errors were
// reported once, at their own lines. A spec is known by its canonical path and its content's hash.
// `include_dirs` (the command line's -I) are searched by a `source:` kernel after the spec's
// `include_dirs:`. A family's borrowed kernels (`name: {spec: file.yaml}`) are loaded from their
// specs, so the family holds them as their own specs define them. A file a spec includes
// (`reference_include:`) is read from the spec's own folder, and its bytes are part of the
// spec's hash.
class SpecLoader {
 public:
  explicit SpecLoader(support::Diagnostics& diags, const YamlLimits& limits = {},
                      std::vector<std::string> include_dirs = {});

  // `display_path` is how the spec is named in diagnostics and generated headers.
  std::optional<ir::Kernel> load(const std::string& path, const std::string& display_path);

 private:
  // The kernel of the spec `path` whose text (read once, by load) is `text`.
  std::optional<ir::Kernel> validate(const std::string& path, const std::string& display_path, const std::string& text);
  bool read_includes(ir::Kernel& kernel, const std::filesystem::path& path, const std::string& shown_spec);
  bool read_included(ir::IncludedCode& inc, const char* what, const std::filesystem::path& path,
                     const std::string& shown_spec);
  bool borrow_members(ir::Kernel& kernel, const std::filesystem::path& path);
  bool borrow_member(ir::Family& family, size_t i, const std::filesystem::path& path);

  support::Diagnostics& diags_;
  YamlLimits limits_;
  std::vector<std::string> include_dirs_;
  // The specs being loaded, outermost first: a borrow reaching one of them again would never end.
  std::vector<std::filesystem::path> loading_;
  // (canonical path, hash of the text) -> the kernel, or nullopt where the spec had errors.
  std::map<std::pair<std::filesystem::path, std::string>, std::optional<ir::Kernel>> loaded_;
};

// One spec (and the specs it borrows from), with a loader of its own.
std::optional<ir::Kernel> load_spec(const std::string& path, const std::string& display_path,
                                    support::Diagnostics& diags, const YamlLimits& limits = {},
                                    const std::vector<std::string>& include_dirs = {});

}  // namespace mtlgen::spec
