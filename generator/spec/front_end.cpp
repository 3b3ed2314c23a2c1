#include "spec/front_end.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "spec/library.h"
#include "spec/placeholders.h"
#include "spec/source_binding.h"
#include "spec/spec_parser.h"
#include "spec/spec_validator.h"
#include "support/hash.h"

namespace mtlgen::spec {

namespace fs = std::filesystem;
using support::ErrorKind;

namespace {

// One load_spec call: the options every spec it reaches is loaded with, the specs being loaded
// (outermost first: a borrow reaching one of them again would never end) and those loaded already.
struct LoadContext {
  support::Diagnostics& diags;
  const YamlLimits& limits;
  const std::vector<std::string>& include_dirs;
  std::vector<fs::path> loading;
  std::map<fs::path, std::optional<ir::Kernel>> loaded;
};

std::optional<ir::Kernel> load(const std::string& path, const std::string& display_path, LoadContext& lc);

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

// Replaces kernel `i` of `family` (of spec `path`) by the kernel it borrows. False when it cannot.
bool borrow_member(ir::Family& family, size_t i, const fs::path& path, LoadContext& lc) {
  const ir::FamilyMemberOrigin& origin = family.origins[i];
  ir::Kernel& member = family.kernels[i];
  const fs::path file = (path.parent_path() / origin.borrowed_spec).lexically_normal();
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    lc.diags.error(ErrorKind::io, origin.loc, fmt::format("no spec file `{}` (looked for {})", origin.borrowed_spec,
                                                          display_path(file)),
                   "the path is relative to the directory of the spec that borrows the kernel");
    return false;
  }
  const fs::path key = fs::weakly_canonical(file, ec);
  if (std::find(lc.loading.begin(), lc.loading.end(), key) != lc.loading.end()) {
    lc.diags.error(ErrorKind::bad_value, origin.loc,
                   fmt::format("`{}` borrows kernels from this spec in turn", origin.borrowed_spec),
                   "define the kernel in one spec and borrow it from the others: a chain of borrows must end");
    return false;
  }
  auto [it, first] = lc.loaded.try_emplace(key);
  if (first) it->second = load(file.string(), display_path(file), lc);
  if (!it->second) {
    lc.diags.error(ErrorKind::bad_value, origin.loc,
                   fmt::format("kernel `{}` cannot be borrowed from `{}`: that spec has errors", member.name,
                               origin.borrowed_spec),
                   "fix the errors reported for it above");
    return false;
  }
  std::vector<std::string> names;
  const ir::Kernel* found = find_kernel(*it->second, member.name, names);
  if (found == nullptr || found->is_family()) {
    std::string s = support::did_you_mean(member.name, names);
    lc.diags.error(ErrorKind::undefined_symbol, member.name_loc,
                   found ? fmt::format("`{}` is a kernel family: a family borrows kernels, not families", member.name)
                         : fmt::format("`{}` defines no kernel `{}`", origin.borrowed_spec, member.name),
                   !s.empty() && !found ? fmt::format("did you mean `{}`?", s)
                                        : fmt::format("its kernels are: {}", fmt::join(names, ", ")));
    return false;
  }
  member = *found;
  return true;
}

bool borrow_members(ir::Kernel& kernel, const fs::path& path, LoadContext& lc) {
  if (!kernel.is_family()) return true;
  auto family = std::make_shared<ir::Family>(*kernel.family);
  bool ok = true;
  for (size_t i = 0; i < family->kernels.size(); ++i) {
    if (family->borrowed(i)) ok = borrow_member(*family, i, path, lc) && ok;
  }
  kernel.family = std::move(family);
  return ok;
}

std::optional<ir::Kernel> load(const std::string& path, const std::string& display_path, LoadContext& lc) {
  std::string text;
  auto root = load_yaml(path, display_path, lc.limits, lc.diags, &text);
  if (!root) return std::nullopt;
  YamlContext ctx(display_path, text, lc.diags);
  if (report_placeholders(ctx, *root) > 0) return std::nullopt;  // a skeleton: list only its TODOs
  ir::Kernel kernel;
  kernel.spec_path = display_path;
  kernel.spec_hash = support::hash_hex(text);
  if (!parse_kernel(ctx, *root, kernel)) return std::nullopt;
  std::error_code ec;
  lc.loading.push_back(fs::weakly_canonical(path, ec));
  const bool borrowed = borrow_members(kernel, path, lc);
  lc.loading.pop_back();
  if (!borrowed) return std::nullopt;
  if (!kernel.is_source()) {
    if (!validate_kernel(kernel, lc.diags)) return std::nullopt;
    return kernel;
  }
  for (const auto& dir : lc.include_dirs) kernel.source->include_dirs.push_back({dir, {}});
  std::optional<msl::Unit> unit = read_source(kernel, path, lc.diags);
  if (!unit) return std::nullopt;
  auto bind = [&](ir::Kernel& k) { bind_source_variants(k, *unit, lc.diags); };
  if (!validate_kernel(kernel, lc.diags, bind)) return std::nullopt;
  return kernel;
}

}  // namespace

std::optional<ir::Kernel> load_spec(const std::string& path, const std::string& display_path,
                                    support::Diagnostics& diags, const YamlLimits& limits,
                                    const std::vector<std::string>& include_dirs) {
  LoadContext lc{diags, limits, include_dirs, {}, {}};
  return load(path, display_path, lc);
}

}  // namespace mtlgen::spec
