#include "spec/front_end.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "spec/library.h"
#include "spec/placeholders.h"
#include "spec/source_binding.h"
#include "spec/spec_parser.h"
#include "spec/spec_validator.h"
#include "support/hash.h"
#include "support/output_set.h"

namespace mtlgen::spec {

namespace fs = std::filesystem;
using support::ErrorKind;

namespace {

// Kernel `name` of a loaded spec: the spec itself or one of its family's kernels.
const ir::Kernel* find_kernel(const ir::Kernel& spec, const std::string& name, std::vector<std::string>& names) {
  if (spec.is_family()) {
    for (const auto& m : spec.family->kernels) {
      if (m.name == name) return &m;
      names.push_back(m.name);
    }
  }
  names.push_back(spec.name);
  return spec.name == name ? &spec : nullptr;
}

}  // namespace

SpecLoader::SpecLoader(support::Diagnostics& diags, const YamlLimits& limits, std::vector<std::string> include_dirs)
    : diags_(diags), limits_(limits), include_dirs_(std::move(include_dirs)) {}

std::optional<ir::Kernel> SpecLoader::load(const std::string& path, const std::string& display_path) {
  std::optional<std::string> text = support::read_file(path);
  if (!text) return read_and_validate(path, display_path);  // which says why it cannot be read
  std::error_code ec;
  auto key = std::make_pair(fs::weakly_canonical(path, ec), support::hash_hex(*text));
  if (auto it = loaded_.find(key); it != loaded_.end()) return it->second;
  auto kernel = read_and_validate(path, display_path);
  loaded_.emplace(std::move(key), kernel);
  return kernel;
}

// Replaces kernel `i` of `family` (of spec `path`) by the kernel it borrows. False when it cannot.
bool SpecLoader::borrow_member(ir::Family& family, size_t i, const fs::path& path) {
  const ir::FamilyMemberOrigin& origin = family.origins[i];
  ir::Kernel& member = family.kernels[i];
  const fs::path file = (path.parent_path() / origin.borrowed_spec).lexically_normal();
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    diags_.error(ErrorKind::io, origin.loc, fmt::format("no spec file `{}` (looked for {})", origin.borrowed_spec,
                                                      display_path(file)),
                 "the path is relative to the directory of the spec that borrows the kernel");
    return false;
  }
  if (std::find(loading_.begin(), loading_.end(), fs::weakly_canonical(file, ec)) != loading_.end()) {
    diags_.error(ErrorKind::bad_value, origin.loc,
                 fmt::format("`{}` borrows kernels from this spec in turn", origin.borrowed_spec),
                 "define the kernel in one spec and borrow it from the others: a chain of borrows must end");
    return false;
  }
  const std::optional<ir::Kernel> borrowed = load(file.string(), display_path(file));
  if (!borrowed) {
    diags_.error(ErrorKind::bad_value, origin.loc,
                 fmt::format("kernel `{}` cannot be borrowed from `{}`: that spec has errors", member.name,
                             origin.borrowed_spec),
                 "fix the errors reported for it above");
    return false;
  }
  std::vector<std::string> names;
  const ir::Kernel* found = find_kernel(*borrowed, member.name, names);
  if (found == nullptr || found->is_family()) {
    std::string s = support::did_you_mean(member.name, names);
    diags_.error(ErrorKind::undefined_symbol, member.name_loc,
                 found ? fmt::format("`{}` is a kernel family: a family borrows kernels, not families", member.name)
                       : fmt::format("`{}` defines no kernel `{}`", origin.borrowed_spec, member.name),
                 !s.empty() && !found ? fmt::format("did you mean `{}`?", s)
                                      : fmt::format("its kernels are: {}", fmt::join(names, ", ")));
    return false;
  }
  member = *found;
  return true;
}

bool SpecLoader::borrow_members(ir::Kernel& kernel, const fs::path& path) {
  if (!kernel.is_family()) return true;
  auto family = std::make_shared<ir::Family>(*kernel.family);
  bool ok = true;
  for (size_t i = 0; i < family->kernels.size(); ++i) {
    if (family->borrowed(i)) ok = borrow_member(*family, i, path) && ok;
  }
  kernel.family = std::move(family);
  return ok;
}

std::optional<ir::Kernel> SpecLoader::read_and_validate(const std::string& path, const std::string& display_path) {
  std::string text;
  auto root = load_yaml(path, display_path, limits_, diags_, &text);
  if (!root) return std::nullopt;
  YamlContext ctx(display_path, text, diags_);
  if (report_placeholders(ctx, *root) > 0) return std::nullopt;  // a skeleton: list only its TODOs
  ir::Kernel kernel;
  kernel.spec_path = display_path;
  kernel.spec_hash = support::hash_hex(text);
  if (!parse_kernel(ctx, *root, kernel)) return std::nullopt;
  std::error_code ec;
  loading_.push_back(fs::weakly_canonical(path, ec));
  const bool borrowed = borrow_members(kernel, path);
  loading_.pop_back();
  if (!borrowed) return std::nullopt;
  if (!kernel.is_source()) {
    if (!validate_kernel(kernel, diags_)) return std::nullopt;
    return kernel;
  }
  for (const auto& dir : include_dirs_) kernel.source->include_dirs.push_back({dir, {}});
  std::optional<msl::Unit> unit = read_source(kernel, path, diags_);
  if (!unit) return std::nullopt;
  auto bind = [&](ir::Kernel& k) { bind_source_variants(k, *unit, diags_); };
  if (!validate_kernel(kernel, diags_, bind)) return std::nullopt;
  return kernel;
}

std::optional<ir::Kernel> load_spec(const std::string& path, const std::string& display_path,
                                    support::Diagnostics& diags, const YamlLimits& limits,
                                    const std::vector<std::string>& include_dirs) {
  return SpecLoader(diags, limits, include_dirs).load(path, display_path);
}

}  // namespace mtlgen::spec
