#include "spec/front_end.h"

#include "spec/placeholders.h"
#include "spec/source_binding.h"
#include "spec/spec_parser.h"
#include "spec/spec_validator.h"
#include "support/hash.h"

namespace mtlgen::spec {

std::optional<ir::Kernel> load_spec(const std::string& path, const std::string& display_path,
                                    support::Diagnostics& diags, const YamlLimits& limits,
                                    const std::vector<std::string>& include_dirs) {
  std::string text;
  auto root = load_yaml(path, display_path, limits, diags, &text);
  if (!root) return std::nullopt;
  YamlContext ctx(display_path, text, diags);
  if (report_placeholders(ctx, *root) > 0) return std::nullopt;  // a skeleton: list only its TODOs
  ir::Kernel kernel;
  kernel.spec_path = display_path;
  kernel.spec_hash = support::hash_hex(text);
  if (!parse_kernel(ctx, *root, kernel)) return std::nullopt;
  if (!kernel.is_source()) {
    if (!validate_kernel(kernel, diags)) return std::nullopt;
    return kernel;
  }
  for (const auto& dir : include_dirs) kernel.source->include_dirs.push_back({dir, {}});
  std::optional<msl::Unit> unit = read_source(kernel, path, diags);
  if (!unit) return std::nullopt;
  auto bind = [&](ir::Kernel& k) { bind_source_variants(k, *unit, diags); };
  if (!validate_kernel(kernel, diags, bind)) return std::nullopt;
  return kernel;
}

}  // namespace mtlgen::spec
