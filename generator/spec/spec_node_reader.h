#pragma once
// What every part of the spec parser reads YAML nodes with: the map, list and name walkers that
// report a wrong kind of node at the node, expressions, type names and function-constant values.
// The kernel's sections (spec_parser.cpp) and its `tests:` (tests_parser.cpp) derive from it.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/kernel.h"
#include "spec/yaml_reader.h"

namespace mtlgen::spec {

class SpecNodeReader {
 protected:
  SpecNodeReader(const YamlContext& ctx, ir::Kernel& k) : ctx_(ctx), k_(k) {}

  using EntryFn = std::function<void(const YAML::Node& key, const YAML::Node& value)>;

  void each_entry(const YAML::Node& map, const char* what, const EntryFn& fn) {
    if (!map.IsDefined() || !ctx_.expect_map(map, what)) return;
    for (auto it = map.begin(); it != map.end(); ++it) fn(it->first, it->second);
  }
  // Like each_entry for maps whose keys the validator does not check for repeats (a test case's
  // dims, set, inputs, scalars; tolerances): YAML keeps both, so a repeat is reported here.
  void each_unique_entry(const YAML::Node& map, const char* what, const EntryFn& fn) {
    std::set<std::string> seen;
    each_entry(map, what, [&](const YAML::Node& key, const YAML::Node& value) {
      if (key.IsScalar() && !seen.insert(key.Scalar()).second) {
        ctx_.diags().error(support::ErrorKind::duplicate_name, ctx_.loc(key), fmt::format("`{}` appears twice in {}", key.Scalar(), what),
                           "YAML keeps only one of them; merge the two entries");
        return;
      }
      fn(key, value);
    });
  }

  void each_item(const YAML::Node& seq, const char* what, const std::function<void(const YAML::Node&)>& fn) {
    if (!seq.IsDefined() || !ctx_.expect_seq(seq, what)) return;
    for (const auto& item : seq) fn(item);
  }

  std::string key_name(const YAML::Node& key, support::SourceLoc& loc) {
    loc = ctx_.loc(key);
    return ctx_.string(key, "a name").value_or("");
  }

  std::optional<expr::Expr> expression(const YAML::Node& node, const char* what) {
    if (node.IsScalar() && !node.Scalar().empty()) return ctx_.expression(node);
    if (node.IsScalar() || !node.IsDefined() || node.IsNull()) {
      ctx_.diags().error(support::ErrorKind::missing_field, ctx_.loc(node), fmt::format("{} needs an expression", what),
                         "write an integer expression of dims, tunables and sizeof(), such as `rows * n`");
      return std::nullopt;
    }
    ctx_.diags().error(support::ErrorKind::wrong_type, ctx_.loc(node), fmt::format("{} must be an expression", what),
                       "write an integer expression such as `rows * n`");
    return std::nullopt;
  }

  std::vector<expr::Expr> expression_list(const YAML::Node& node, const char* what) {
    std::vector<expr::Expr> out;
    if (node.IsScalar()) {  // a single axis may be written without brackets
      if (auto e = expression(node, what)) out.push_back(*e);
      return out;
    }
    each_item(node, what, [&](const YAML::Node& item) {
      if (auto e = expression(item, what)) out.push_back(*e);
    });
    return out;
  }

  std::optional<ir::TypeRef> type_ref(const YAML::Node& node, const char* what) {
    auto text = ctx_.string(node, what);
    if (!text) return std::nullopt;
    if (auto t = ir::scalar_type_from_spec(*text)) return ir::TypeRef{t, "", ctx_.value_loc(node)};
    // Resolved against `types:` by the validator, which knows every parameter.
    return ir::TypeRef{std::nullopt, *text, ctx_.value_loc(node)};
  }

  // A value of function constant `f`: true/false for bool, a number otherwise. Ranges are checked
  // by the validator, for defaults and test values alike.
  std::optional<double> constant_value(const ir::FunctionConstant& f, const YAML::Node& n, const char* what) {
    if (f.type != ir::ScalarType::boolean) return ctx_.number(n, what);
    if (auto b = ctx_.boolean(n, what)) return *b ? 1 : 0;
    return std::nullopt;
  }

  const YamlContext& ctx_;
  ir::Kernel& k_;
};

}  // namespace mtlgen::spec
