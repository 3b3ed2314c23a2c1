#pragma once
// Typed, located access to YAML nodes. Every problem becomes a Diagnostic at the node's
// line:column; readers return nullopt instead of throwing so one pass reports every error.
#include <yaml-cpp/yaml.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "expr/expr.h"
#include "support/diagnostics.h"

namespace mtlgen::spec {

using support::Diagnostics;
using support::SourceLoc;

struct YamlLimits {
  size_t max_file_bytes = 1 << 20;     // a kernel spec is a few KB; bigger is a mistake
  size_t max_aliases = 64;             // anchors are for sharing a test input, not for recursion
  size_t max_expanded_nodes = 100000;  // bounds alias fan-out ("billion laughs")
};

// Reads the spec file `path` into `text`; false, with an error, when it cannot be read or is over
// limits.max_file_bytes. `display_path` is what diagnostics print.
bool read_spec_file(const std::string& path, const std::string& display_path, const YamlLimits& limits,
                    Diagnostics& diags, std::string& text);
// Parses a spec's text (as read_spec_file read it).
std::optional<YAML::Node> parse_spec_yaml(const std::string& text, const std::string& display_path,
                                          const YamlLimits& limits, Diagnostics& diags);
// Both: reads and parses `path`.
std::optional<YAML::Node> load_yaml(const std::string& path, const std::string& display_path,
                                    const YamlLimits& limits, Diagnostics& diags, std::string* text_out);

class YamlContext {
 public:
  YamlContext(std::string file, std::string text, Diagnostics& diags)
      : file_(std::move(file)), text_(std::move(text)), diags_(diags) {}

  SourceLoc loc(const YAML::Node& node) const;
  // Location of the first character of a scalar's value (inside quotes, past an anchor or a tag).
  // A value used through an alias is located at the alias.
  SourceLoc value_loc(const YAML::Node& node) const;
  // Whether a scalar's text is written at value_loc as is, so that a column inside it is value_loc's
  // plus the offset: not so for an alias, a quoted string with escapes, a value over several lines.
  bool written_as_is(const YAML::Node& node) const;
  // A scalar parsed as an expression, its nodes located in the spec text (at value_loc where the
  // text is not written as is).
  std::optional<expr::Expr> expression(const YAML::Node& node) const;
  Diagnostics& diags() const { return diags_; }
  const std::string& file() const { return file_; }

  std::optional<std::string> string(const YAML::Node& node, const char* what) const;
  std::optional<int64_t> integer(const YAML::Node& node, const char* what) const;
  std::optional<double> number(const YAML::Node& node, const char* what) const;  // accepts nan, inf, -inf
  std::optional<bool> boolean(const YAML::Node& node, const char* what) const;
  bool expect_map(const YAML::Node& node, const char* what) const;
  bool expect_seq(const YAML::Node& node, const char* what) const;

  // Text of a block scalar with the location of its first content line.
  std::optional<std::pair<std::string, SourceLoc>> code_block(const YAML::Node& node, const char* what) const;

 private:
  std::optional<size_t> missing_value_offset(int pos) const;
  size_t last_content_before(size_t p) const;
  std::optional<size_t> value_offset(const YAML::Node& node) const;

  std::string file_;
  std::string text_;
  Diagnostics& diags_;
};

// Walks one mapping: hands out known keys, then reports unknown ones with a did-you-mean.
class MapReader {
 public:
  MapReader(const YamlContext& ctx, const YAML::Node& map, std::string what, std::vector<std::string> known);
  ~MapReader();

  bool ok() const { return ok_; }
  YAML::Node optional(const std::string& key);
  YAML::Node required(const std::string& key);  // reports missing_field when absent
  const YAML::Node& node() const { return map_; }

 private:
  const YamlContext& ctx_;
  YAML::Node map_;
  std::string what_;
  std::vector<std::string> known_;
  bool ok_;
};

}  // namespace mtlgen::spec
