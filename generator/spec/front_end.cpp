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
#include "support/include_policy.h"
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

// Why `written` (a path in a spec, relative to its folder) may not be read; "" when it may.
std::string outside_folder(const fs::path& written) {
  if (written.has_root_path()) return "is an absolute path";
  for (const auto& part : written) {
    if (part == "..") return "reaches outside the spec's folder (`..`)";
  }
  return "";
}

// `sub` is `dir` or below it (both canonical).
bool within(const fs::path& dir, const fs::path& sub) {
  auto [d, s] = std::mismatch(dir.begin(), dir.end(), sub.begin(), sub.end());
  return d == dir.end();
}

}  // namespace

SpecLoader::SpecLoader(support::Diagnostics& diags, const YamlLimits& limits, std::vector<std::string> include_dirs)
    : diags_(diags), limits_(limits), include_dirs_(std::move(include_dirs)) {}

std::optional<ir::Kernel> SpecLoader::load(const std::string& path, const std::string& display_path) {
  std::string text;
  if (!read_spec_file(path, display_path, limits_, diags_, text)) return std::nullopt;
  std::error_code ec;
  auto key = std::make_pair(fs::weakly_canonical(path, ec), support::hash_hex(text));
  if (auto it = loaded_.find(key); it != loaded_.end()) return it->second;
  auto kernel = validate(path, display_path, text);
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

// Reads the file `inc` names (`what:` of spec `path`, shown as `shown_spec`) into inc.code: a
// file of the spec's folder or below, no larger than a spec, which includes only what the include
// policy allows. Diagnostics show it as `shown_spec`'s folder followed by the path written.
bool SpecLoader::read_included(ir::IncludedCode& inc, const char* what, const fs::path& path,
                               const std::string& shown_spec) {
  if (!inc.present()) return true;
  const char* hint = "name a file in this spec's folder (or below it) by a path relative to the folder";
  if (std::string why = outside_folder(inc.path); !why.empty()) {
    diags_.error(ErrorKind::bad_value, inc.path_loc, fmt::format("`{}: {}` {}", what, inc.path, why), hint);
    return false;
  }
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(fs::absolute(path, ec).parent_path(), ec);
  const fs::path file = fs::weakly_canonical(dir / inc.path, ec);
  if (!within(dir, file)) {  // a link that leads out of the folder
    diags_.error(ErrorKind::bad_value, inc.path_loc,
                 fmt::format("`{}: {}` resolves outside the spec's folder (to {})", what, inc.path, display_path(file)),
                 hint);
    return false;
  }
  if (!fs::is_regular_file(file, ec)) {
    diags_.error(ErrorKind::io, inc.path_loc,
                 fmt::format(fmt::runtime(fs::exists(file, ec) ? "`{}` is not a regular file ({})" : "no file `{}` (looked for {})"),
                             inc.path, display_path(file)),
                 "the path is relative to the folder of the spec that includes it");
    return false;
  }
  std::optional<std::string> text = support::read_file(file);
  if (!text) {
    diags_.error(ErrorKind::io, inc.path_loc, fmt::format("cannot read `{}`", inc.path), "check its permissions");
    return false;
  }
  if (text->size() > limits_.max_file_bytes) {
    diags_.error(ErrorKind::file_too_large, inc.path_loc,
                 fmt::format("`{}` is {} bytes; the limit is {}", inc.path, text->size(), limits_.max_file_bytes),
                 "an included file holds code a few specs share: a few kilobytes");
    return false;
  }
  std::erase(*text, '\r');
  const std::string shown = (fs::path(shown_spec).parent_path() / inc.path).lexically_normal().generic_string();
  diags_.add_source(shown, *text);
  if (auto v = support::first_include_violation(*text, 1)) {
    diags_.error(ErrorKind::msl_syntax, {shown, v->line, v->column}, fmt::format("`{}`: {}", v->directive, v->why),
                 support::kIncludePolicyHint);
    return false;
  }
  inc.code = {std::move(*text), {shown, 1, 1}};
  return true;
}

// The files `kernel` (spec `path`) and its own family members include, read; the spec's hash
// then covers their bytes too (what the generated files, the manifest and the result cache say).
bool SpecLoader::read_includes(ir::Kernel& kernel, const fs::path& path, const std::string& shown_spec) {
  std::vector<ir::Kernel*> own = {&kernel};  // not the borrowed members: their specs read theirs
  std::shared_ptr<ir::Family> family;
  if (kernel.is_family()) {
    family = std::make_shared<ir::Family>(*kernel.family);
    for (size_t i = 0; i < family->kernels.size(); ++i) {
      if (!family->borrowed(i)) own.push_back(&family->kernels[i]);
    }
  }
  bool ok = true;
  std::string included;
  for (ir::Kernel* k : own) {
    ok = read_included(k->reference_include, "reference_include", path, shown_spec) && ok;
    const ir::IncludedCode& inc = k->reference_include;
    if (inc.present()) included += fmt::format("\n--- reference_include: {}\n{}", inc.path, inc.code.text);
  }
  if (!included.empty()) {
    const std::string hash = support::hash_hex(kernel.spec_hash + included);
    for (ir::Kernel* k : own) k->spec_hash = hash;
  }
  if (family) kernel.family = std::move(family);
  return ok;
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

std::optional<ir::Kernel> SpecLoader::validate(const std::string& path, const std::string& display_path,
                                               const std::string& text) {
  auto root = parse_spec_yaml(text, display_path, limits_, diags_);
  if (!root) return std::nullopt;
  YamlContext ctx(display_path, text, diags_);
  if (report_placeholders(ctx, *root) > 0) return std::nullopt;  // a skeleton: list only its TODOs
  ir::Kernel kernel;
  kernel.spec_path = display_path;
  kernel.spec_hash = support::hash_hex(text);
  if (!parse_kernel(ctx, *root, kernel)) return std::nullopt;
  if (!read_includes(kernel, path, display_path)) return std::nullopt;
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
