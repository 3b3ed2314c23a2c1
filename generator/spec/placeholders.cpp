#include "spec/placeholders.h"

#include <fmt/format.h>

namespace mtlgen::spec {
namespace {

bool is_placeholder(const YAML::Node& node) {
  return node.IsScalar() && node.Scalar().rfind("TODO", 0) == 0;
}

// Depth-first, in document order; `path` names the value as `buffers.x.shape`.
void walk(const YamlContext& ctx, const YAML::Node& node, const std::string& path, int& found) {
  if (is_placeholder(node)) {
    ++found;
    std::string asks = node.Scalar().substr(4);
    while (!asks.empty() && (asks[0] == ':' || asks[0] == ' ')) asks.erase(0, 1);
    ctx.diags().error(support::ErrorKind::placeholder, ctx.value_loc(node), fmt::format("`{}` is still a TODO", path),
                      asks.empty() ? "replace it with its value (docs/import.md)" : "replace it with " + asks);
    return;
  }
  if (node.IsMap()) {
    for (const auto& item : node) {
      std::string key = item.first.IsScalar() ? item.first.Scalar() : "?";
      walk(ctx, item.second, path.empty() ? key : path + "." + key, found);
    }
  } else if (node.IsSequence()) {
    for (size_t i = 0; i < node.size(); ++i) walk(ctx, node[i], fmt::format("{}[{}]", path, i), found);
  }
}

}  // namespace

int report_placeholders(const YamlContext& ctx, const YAML::Node& root) {
  int found = 0;
  walk(ctx, root, "", found);
  return found;
}

}  // namespace mtlgen::spec
