#include "spec/yaml_reader.h"

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cctype>
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
  size_t documents = 0;
  YAML::Mark second_document;
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (documents++ == 1) second_document = mark;
  }
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

// A spec nests a few levels; this bounds the recursion of every walk over the tree.
constexpr int kMaxNesting = 64;

// Nodes reachable with aliases expanded; stops counting past `limit` (or past a nesting depth
// that only a self-referencing alias reaches).
size_t expanded_nodes(const YAML::Node& node, size_t limit, int depth = 0) {
  if (depth > kMaxNesting) return limit + 1;
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

// The first place where flow collections (`[`, `{`) nest deeper than kMaxNesting, or npos. Scanned
// before yaml-cpp parses, whose own limit reports only "bad file" or recurses deeply first.
size_t too_deep_flow(const std::string& text) {
  int depth = 0;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#' && (i == 0 || std::isspace(static_cast<unsigned char>(text[i - 1])))) {
      i = std::min(text.find('\n', i), text.size());
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxNesting) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::string::npos;
}

SourceLoc offset_loc(const std::string& file, const std::string& text, size_t offset) {
  SourceLoc l{file, 1, 1};
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++l.line;
      l.column = 1;
    } else {
      ++l.column;
    }
  }
  return l;
}

// Reports text that yaml-cpp would misread without a located error. Returns false if it did.
bool check_text(const std::string& display_path, const std::string& text, Diagnostics& diags) {
  // A lone CR (classic Mac line endings) is no line break to yaml-cpp: the file is one line.
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n')) {
      diags.error(ErrorKind::yaml_syntax, offset_loc(display_path, text, i),
                  "the spec has CR-only line endings", "save it with LF (or CRLF) line endings");
      return false;
    }
  }
  if (size_t deep = too_deep_flow(text); deep != std::string::npos) {
    diags.error(ErrorKind::yaml_syntax, offset_loc(display_path, text, deep),
                fmt::format("YAML nests deeper than {} levels", kMaxNesting),
                "a spec nests a few levels: flatten the structure");
    return false;
  }
  return true;
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
  if (!check_text(display_path, text, diags)) return std::nullopt;
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
    if (counter.documents > 1) {
      diags.error(ErrorKind::yaml_syntax, mark_loc(display_path, counter.second_document),
                  "the spec file holds a second YAML document", "one spec per file: move it to a file of its own");
      return std::nullopt;
    }
    YAML::Node root = YAML::Load(text);
    if (!root.IsDefined() || root.IsNull()) {
      diags.error(ErrorKind::missing_field, {display_path, 1, 1}, "the spec is empty",
                  "a spec is a mapping that starts with `name:`; see docs/spec-format.md");
      return std::nullopt;
    }
    if (expanded_nodes(root, limits.max_expanded_nodes) > limits.max_expanded_nodes) {
      diags.error(ErrorKind::alias_limit, {display_path, 1, 1},
                  fmt::format("spec expands to more than {} YAML nodes", limits.max_expanded_nodes),
                  "aliases nested inside aliases multiply; expand them by hand or remove them");
      return std::nullopt;
    }
    return root;
  } catch (const YAML::DeepRecursion& e) {
    diags.error(ErrorKind::yaml_syntax, mark_loc(display_path, e.mark), "YAML nests too deep",
                "a spec nests a few levels: flatten the structure");
    return std::nullopt;
  } catch (const YAML::Exception& e) {
    diags.error(ErrorKind::yaml_syntax, mark_loc(display_path, e.mark), e.msg,
                "check indentation and that every `key: value` pair is well formed");
    return std::nullopt;
  }
}

SourceLoc YamlContext::loc(const YAML::Node& node) const {
  if (node.IsDefined() && node.IsNull()) {
    if (auto missing = missing_value_offset(node.Mark().pos)) return offset_loc(file_, text_, *missing);
  }
  return mark_loc(file_, node.Mark());
}

// For `key:` with nothing after it, yaml-cpp marks the null value at the next token, often on the
// next line; the value is missing right after the `:` (or `- `). Nullopt for a written null.
std::optional<size_t> YamlContext::missing_value_offset(int pos) const {
  if (pos <= 0 || static_cast<size_t>(pos) > text_.size()) return std::nullopt;
  size_t p = static_cast<size_t>(pos);
  if (p < text_.size() && (text_[p] == '~' || text_.compare(p, 4, "null") == 0 || text_.compare(p, 4, "Null") == 0)) {
    return std::nullopt;
  }
  size_t before = text_.find_last_not_of(" \t\r\n", p - 1);
  if (before == std::string::npos || (text_[before] != ':' && text_[before] != '-')) return std::nullopt;
  bool same_line = text_.find('\n', before) >= p;
  if (same_line) return std::nullopt;  // `{type: , ...}`: the mark is already on the line
  return before + 1;
}

SourceLoc YamlContext::value_loc(const YAML::Node& node) const {
  SourceLoc l = loc(node);
  int pos = node.Mark().pos;
  if (pos < 0 || static_cast<size_t>(pos) >= text_.size()) return l;
  size_t p = static_cast<size_t>(pos);
  if (text_[p] == '&') {  // `&name value`: the value starts after the anchor
    size_t after = text_.find_first_of(" \t", p);
    size_t value = after == std::string::npos ? std::string::npos : text_.find_first_not_of(" \t", after);
    if (value == std::string::npos) return l;
    l.column += static_cast<int>(value - p);
    p = value;
  }
  if (text_[p] == '"' || text_[p] == '\'') ++l.column;
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
    diags_.error(ErrorKind::wrong_type, loc(node), fmt::format("{} must be a string, not {}", what, kind_name(node)),
                 node.IsNull() ? fmt::format("write a value after the `:`") : "write a single value, not a list or mapping");
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
    diags_.error(ErrorKind::wrong_type, loc(node), fmt::format("{} must be true or false, not {}", what,
                                                               node.IsScalar() ? "`" + node.Scalar() + "`" : kind_name(node)),
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
  // Undefined, not null: callers then skip the key instead of reporting it as empty.
  if (!ok_) return YAML::Node(YAML::NodeType::Undefined);
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
