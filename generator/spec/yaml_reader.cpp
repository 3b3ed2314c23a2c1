#include "spec/yaml_reader.h"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

namespace mtlgen::spec {

using support::ErrorKind;

namespace {

// Counts alias uses while parsing, before any node is built from them.
class AliasCounter : public YAML::EventHandler {
 public:
  size_t aliases = 0;
  YAML::Mark first_alias;
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    if (aliases++ == 0) first_alias = mark;
  }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// Nodes reachable with aliases expanded; stops counting past `limit` (or past a nesting depth
// that only a self-referencing alias reaches).
size_t expanded_nodes(const YAML::Node& node, size_t limit, int depth = 0) {
  if (depth > 64) return limit + 1;
  size_t count = 1;
  if (node.IsMap() || node.IsSequence()) {
    for (auto it = node.begin(); it != node.end() && count <= limit; ++it) {
      if (node.IsMap()) {
        count += expanded_nodes(it->first, limit - count, depth + 1);
        if (count > limit) break;  // `limit - count` would wrap around
        count += expanded_nodes(it->second, limit - count, depth + 1);
      } else {
        count += expanded_nodes(*it, limit - count, depth + 1);
      }
    }
  }
  return count;
}

SourceLoc mark_loc(const std::string& file, const YAML::Mark& m) {
  if (m.is_null()) return {file, 0, 0};
  return {file, m.line + 1, m.column + 1};
}

bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  out = s.str();
  return true;
}

}  // namespace

std::optional<YAML::Node> load_yaml(const std::string& path, const std::string& display_path,
                                    const YamlLimits& limits, Diagnostics& diags, std::string* text_out) {
  std::string text;
  if (!read_file(path, text)) {
    diags.error(ErrorKind::io, {display_path}, "cannot read spec file", "check the path and its permissions");
    return std::nullopt;
  }
  if (text.size() > limits.max_file_bytes) {
    diags.error(ErrorKind::file_too_large, {display_path, 1, 1},
                fmt::format("spec file is {} bytes; the limit is {}", text.size(), limits.max_file_bytes),
                "a kernel spec is a few kilobytes: move large data out of the spec");
    return std::nullopt;
  }
  diags.add_source(display_path, text);
  if (text_out) *text_out = text;
  try {
    std::istringstream events(text);
    AliasCounter counter;
    YAML::Parser parser(events);
    while (parser.HandleNextDocument(counter)) {
    }
    if (counter.aliases > limits.max_aliases) {
      diags.error(ErrorKind::alias_limit, mark_loc(display_path, counter.first_alias),
                  fmt::format("{} YAML aliases; at most {} are allowed", counter.aliases, limits.max_aliases),
                  "use anchors and aliases sparingly, for sharing a value, not to build large structures");
      return std::nullopt;
    }
    YAML::Node root = YAML::Load(text);
    if (expanded_nodes(root, limits.max_expanded_nodes) > limits.max_expanded_nodes) {
      diags.error(ErrorKind::alias_limit, {display_path, 1, 1},
                  fmt::format("spec expands to more than {} YAML nodes", limits.max_expanded_nodes),
                  "aliases nested inside aliases multiply; expand them by hand or remove them");
      return std::nullopt;
    }
    return root;
  } catch (const YAML::Exception& e) {
    diags.error(ErrorKind::yaml_syntax, mark_loc(display_path, e.mark), e.msg,
                "check indentation and that every `key: value` pair is well formed");
    return std::nullopt;
  }
}

SourceLoc YamlContext::loc(const YAML::Node& node) const { return mark_loc(file_, node.Mark()); }

SourceLoc YamlContext::value_loc(const YAML::Node& node) const {
  SourceLoc l = loc(node);
  int pos = node.Mark().pos;
  if (pos >= 0 && static_cast<size_t>(pos) < text_.size() && (text_[pos] == '"' || text_[pos] == '\'')) {
    ++l.column;
  }
  return l;
}

namespace {

const char* kind_name(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsMap()) return "a mapping";
  if (node.IsSequence()) return "a list";
  return "a scalar";
}

}  // namespace

std::optional<std::string> YamlContext::string(const YAML::Node& node, const char* what) const {
  if (!node.IsScalar()) {
    diags_.error(ErrorKind::wrong_type, loc(node), fmt::format("{} must be a string, not {}", what, kind_name(node)));
    return std::nullopt;
  }
  return node.Scalar();
}

std::optional<int64_t> YamlContext::integer(const YAML::Node& node, const char* what) const {
  int64_t v = 0;
  if (!node.IsScalar() || !YAML::convert<int64_t>::decode(node, v)) {
    diags_.error(ErrorKind::wrong_type, loc(node),
                 fmt::format("{} must be an integer, not {}", what,
                             node.IsScalar() ? "`" + node.Scalar() + "`" : kind_name(node)),
                 "write a whole number without quotes, e.g. `32`");
    return std::nullopt;
  }
  return v;
}

std::optional<double> YamlContext::number(const YAML::Node& node, const char* what) const {
  if (node.IsScalar()) {
    const std::string& s = node.Scalar();
    if (s == "nan" || s == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf" || s == "+inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    double v = 0;
    if (YAML::convert<double>::decode(node, v)) return v;
  }
  diags_.error(ErrorKind::wrong_type, loc(node),
               fmt::format("{} must be a number, not {}", what,
                           node.IsScalar() ? "`" + node.Scalar() + "`" : kind_name(node)),
               "numbers may also be nan, inf or -inf");
  return std::nullopt;
}

std::optional<bool> YamlContext::boolean(const YAML::Node& node, const char* what) const {
  bool v = false;
  if (!node.IsScalar() || !YAML::convert<bool>::decode(node, v)) {
    diags_.error(ErrorKind::wrong_type, loc(node), fmt::format("{} must be true or false", what),
                 "write `true` or `false` without quotes");
    return std::nullopt;
  }
  return v;
}

bool YamlContext::expect_map(const YAML::Node& node, const char* what) const {
  if (node.IsMap()) return true;
  diags_.error(ErrorKind::wrong_type, loc(node), fmt::format("{} must be a mapping, not {}", what, kind_name(node)),
               "write `key: value` pairs, one per line");
  return false;
}

bool YamlContext::expect_seq(const YAML::Node& node, const char* what) const {
  if (node.IsSequence()) return true;
  diags_.error(ErrorKind::wrong_type, loc(node), fmt::format("{} must be a list, not {}", what, kind_name(node)),
               "write a list as `[a, b]` or as lines starting with `- `");
  return false;
}

std::optional<std::pair<std::string, SourceLoc>> YamlContext::code_block(const YAML::Node& node,
                                                                         const char* what) const {
  auto text = string(node, what);
  if (!text) return std::nullopt;
  SourceLoc l = value_loc(node);
  int pos = node.Mark().pos;
  bool block = pos >= 0 && static_cast<size_t>(pos) < text_.size() && (text_[pos] == '|' || text_[pos] == '>');
  if (block) {
    ++l.line;  // content starts on the line after the `|` indicator
    // The block's indentation is that of its first non-blank line.
    size_t line_start = text_.find('\n', pos);
    size_t first = std::string::npos;
    while (line_start != std::string::npos) {
      first = text_.find_first_not_of(' ', line_start + 1);
      if (first == std::string::npos || text_[first] != '\n') break;
      line_start = first;
    }
    l.column = first == std::string::npos ? 1 : static_cast<int>(first - line_start);
  }
  return std::pair{*text, l};
}

MapReader::MapReader(const YamlContext& ctx, const YAML::Node& map, std::string what, std::vector<std::string> known)
    : ctx_(ctx), map_(map), what_(std::move(what)), known_(std::move(known)) {
  ok_ = ctx_.expect_map(map_, what_.c_str());
}

MapReader::~MapReader() {
  if (!ok_) return;
  std::set<std::string> seen;
  for (auto it = map_.begin(); it != map_.end(); ++it) {
    std::string key = it->first.IsScalar() ? it->first.Scalar() : "";
    if (!seen.insert(key).second) {
      ctx_.diags().error(ErrorKind::duplicate_name, ctx_.loc(it->first), fmt::format("`{}` appears twice in {}", key, what_),
                         "YAML keeps only one of them; merge the two entries");
      continue;
    }
    if (std::find(known_.begin(), known_.end(), key) != known_.end()) continue;
    std::string suggestion = support::did_you_mean(key, known_);
    std::string hint = suggestion.empty() ? fmt::format("{} accepts: {}", what_, fmt::join(known_, ", "))
                                          : fmt::format("did you mean `{}`?", suggestion);
    ctx_.diags().error(ErrorKind::unknown_key, ctx_.loc(it->first), fmt::format("unknown key `{}` in {}", key, what_),
                       hint);
  }
}

YAML::Node MapReader::optional(const std::string& key) {
  if (!ok_) return YAML::Node();
  for (auto it = map_.begin(); it != map_.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) return it->second;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

YAML::Node MapReader::required(const std::string& key) {
  YAML::Node n = optional(key);
  if (ok_ && !n.IsDefined()) {
    ctx_.diags().error(ErrorKind::missing_field, ctx_.loc(map_), fmt::format("{} is missing `{}`", what_, key),
                       fmt::format("add `{}:`; see docs/spec-format.md", key));
  }
  return n;
}

}  // namespace mtlgen::spec
