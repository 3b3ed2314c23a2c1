#include "spec/yaml_reader.h"

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

namespace mtlgen::spec {

using support::ErrorKind;

namespace {

// A spec nests a few levels; this bounds the recursion of every walk over the tree.
constexpr int kMaxNesting = 64;

}  // namespace

// yaml-cpp sets a node's mark only in its own builder. `as_if` is a friend of YAML::Node that a
// user may specialize; this specialization, for a tag type of ours, sets the mark of a node built
// here.
struct NodeMarkAccess {};

}  // namespace mtlgen::spec

namespace YAML {
template <>
struct as_if<mtlgen::spec::NodeMarkAccess, void> {
  static void set(Node& node, const Mark& mark) {
    node.EnsureNodeExists();
    node.m_pNode->set_mark(mark);
  }
};
}  // namespace YAML

namespace mtlgen::spec {
namespace {

void set_mark(YAML::Node& node, const YAML::Mark& mark) { YAML::as_if<NodeMarkAccess, void>::set(node, mark); }

// Builds the tree of the first document from parser events, as yaml-cpp's own builder does, except
// that an alias becomes a copy of its anchor's node marked at the `*alias`: yaml-cpp hands back the
// anchor's node itself, so an error in a value used through an alias pointed at the anchor. Nesting,
// aliases and nodes (aliases expanded) are bounded as the events arrive; the first problem stops
// the parse.
class Composer : public YAML::EventHandler {
 public:
  struct Problem {
    ErrorKind kind;
    YAML::Mark mark;
    std::string message;
    std::string hint;
  };
  struct Stop {};  // thrown out of the parser once `problem` is set

  Composer(const YamlLimits& limits, const std::string& text) : limits_(limits), text_(text) {}

  YAML::Node root;  // undefined when the document is empty
  std::optional<Problem> problem;

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ == 2) {
      fail(ErrorKind::yaml_syntax, mark, "the spec file holds a second YAML document",
           "one spec per file: move it to a file of its own");
    }
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    add(YAML::Node(YAML::NodeType::Null), mark, "", anchor);
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    add(YAML::Node(value), mark, tag, anchor);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value style) override {
    open(YAML::NodeType::Sequence, mark, tag, anchor, style);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value style) override {
    open(YAML::NodeType::Map, mark, tag, anchor, style);
  }
  void OnMapEnd() override { close(); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override;

 private:
  struct Open {
    YAML::Node node;
    YAML::anchor_t anchor;
    std::optional<YAML::Node> key;  // a mapping's key waiting for its value
  };

  [[noreturn]] void fail(ErrorKind kind, const YAML::Mark& mark, std::string message, std::string hint) {
    problem = Problem{kind, mark, std::move(message), std::move(hint)};
    throw Stop{};
  }

  void too_deep(const YAML::Mark& mark) {
    fail(ErrorKind::yaml_syntax, mark, fmt::format("YAML nests deeper than {} levels", kMaxNesting),
         "a spec nests a few levels: flatten the structure");
  }

  // Every node built, copies of aliased nodes included, counts against max_expanded_nodes.
  void count(const YAML::Mark& mark, bool through_alias) {
    if (++nodes_ <= limits_.max_expanded_nodes) return;
    if (through_alias) {
      fail(ErrorKind::alias_limit, mark,
           fmt::format("spec expands to more than {} YAML nodes through its aliases", limits_.max_expanded_nodes),
           "aliases nested inside aliases multiply; expand them by hand or remove them");
    }
    fail(ErrorKind::alias_limit, mark, fmt::format("spec has more than {} YAML nodes", limits_.max_expanded_nodes),
         "a kernel spec is a few hundred values: move large data out of the spec");
  }

  // A new node goes into its parent right away, so that the parent's node memory takes it in
  // one step; a mapping's key waits for its value.
  void attach(const YAML::Node& node) {
    if (stack_.empty()) {
      root = node;
      return;
    }
    Open& top = stack_.back();
    if (top.node.IsSequence()) {
      top.node.push_back(node);
    } else if (!top.key) {
      top.key = node;
    } else {
      top.node.force_insert(*top.key, node);
      top.key.reset();
    }
  }

  void add(YAML::Node node, const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor) {
    count(mark, false);
    if (!tag.empty()) node.SetTag(tag);
    set_mark(node, mark);
    if (anchor != YAML::NullAnchor) anchors_[anchor] = node;
    attach(node);
  }

  void open(YAML::NodeType::value type, const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
            YAML::EmitterStyle::value style) {
    if (stack_.size() >= static_cast<size_t>(kMaxNesting)) too_deep(mark);
    count(mark, false);
    YAML::Node node(type);
    if (!tag.empty()) node.SetTag(tag);
    node.SetStyle(style);
    set_mark(node, mark);
    attach(node);
    stack_.push_back({node, anchor, std::nullopt});
  }

  void close() {
    Open top = std::move(stack_.back());
    stack_.pop_back();
    // Registered once complete: an alias inside the node it names is an error, not a cycle.
    if (top.anchor != YAML::NullAnchor) anchors_[top.anchor] = top.node;
  }

  // A node like `from` (scalar, tag, style), empty if a collection, marked at `mark`.
  YAML::Node shell(const YAML::Node& from, const YAML::Mark& mark) {
    count(mark, true);
    YAML::Node node = from.IsScalar() ? YAML::Node(from.Scalar()) : YAML::Node(from.Type());
    if (!from.Tag().empty()) node.SetTag(from.Tag());
    if (!from.IsScalar() && !from.IsNull()) node.SetStyle(from.Style());
    set_mark(node, mark);
    return node;
  }

  // Fills `to`, already in the tree at nesting `depth`, with copies of `from`'s children.
  void fill(YAML::Node& to, const YAML::Node& from, const YAML::Mark& mark, size_t depth) {
    if (!from.IsMap() && !from.IsSequence()) return;
    if (depth >= static_cast<size_t>(kMaxNesting)) too_deep(mark);
    for (auto it = from.begin(); it != from.end(); ++it) {
      if (from.IsSequence()) {
        YAML::Node item = shell(*it, mark);
        to.push_back(item);
        fill(item, *it, mark, depth + 1);
      } else {
        YAML::Node key = shell(it->first, mark);
        fill(key, it->first, mark, depth + 1);
        YAML::Node value = shell(it->second, mark);
        to.force_insert(key, value);
        fill(value, it->second, mark, depth + 1);
      }
    }
  }

  std::string alias_name(const YAML::Mark& mark) const {
    if (mark.pos < 0 || static_cast<size_t>(mark.pos) >= text_.size()) return "*";
    size_t end = text_.find_first_of(" \t\r\n,]}", static_cast<size_t>(mark.pos));
    return text_.substr(static_cast<size_t>(mark.pos), std::min(end, text_.size()) - static_cast<size_t>(mark.pos));
  }

  const YamlLimits& limits_;
  const std::string& text_;
  size_t documents_ = 0;
  size_t aliases_ = 0;
  YAML::Mark first_alias_;
  size_t nodes_ = 0;
  std::vector<Open> stack_;
  std::map<YAML::anchor_t, YAML::Node> anchors_;
};

void Composer::OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) {
  if (aliases_++ == 0) first_alias_ = mark;
  if (aliases_ > limits_.max_aliases) {
    fail(ErrorKind::alias_limit, first_alias_, fmt::format("more than {} YAML aliases", limits_.max_aliases),
         "use anchors and aliases sparingly, for sharing a value, not to build large structures");
  }
  auto found = anchors_.find(anchor);
  if (found == anchors_.end()) {
    fail(ErrorKind::alias_limit, mark, fmt::format("alias `{}` is used inside the node its anchor names", alias_name(mark)),
         "an alias repeats a complete node: move it out of the anchored node");
  }
  YAML::Node copy = shell(found->second, mark);
  attach(copy);
  fill(copy, found->second, mark, stack_.size() + 1);
}

SourceLoc mark_loc(const std::string& file, const YAML::Mark& m) {
  if (m.is_null()) return {file, 0, 0};
  return {file, m.line + 1, m.column + 1};
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
  return true;
}

// What to do about one of yaml-cpp's syntax errors.
std::string syntax_hint(const std::string& message) {
  namespace msg = YAML::ErrorMsg;
  if (message == msg::UNKNOWN_ANCHOR) return "an alias `*name` repeats a node anchored `&name` earlier in the file";
  if (message == msg::END_OF_MAP_FLOW || message == msg::END_OF_SEQ_FLOW || message == msg::FLOW_END) {
    return "close every `{` with `}` and every `[` with `]`; quote values that contain `,` `[` `]` `{` `}`";
  }
  if (message == msg::MAP_VALUE) return "quote a value that contains `: `, and indent nested keys under their parent";
  if (message.rfind(msg::INVALID_ESCAPE, 0) == 0) return "in double quotes write a backslash as `\\\\`, or use single quotes";
  if (message.find("tab") != std::string::npos) return "indent with spaces, not tabs";
  return "check indentation and that every `key: value` pair is well formed";
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

bool read_spec_file(const std::string& path, const std::string& display_path, const YamlLimits& limits,
                    Diagnostics& diags, std::string& text) {
  if (!read_file(path, text)) {
    diags.error(ErrorKind::io, {display_path}, "cannot read spec file", "check the path and its permissions");
    return false;
  }
  if (text.size() > limits.max_file_bytes) {
    diags.error(ErrorKind::file_too_large, {display_path, 1, 1},
                fmt::format("spec file is {} bytes; the limit is {}", text.size(), limits.max_file_bytes),
                "a kernel spec is a few kilobytes: move large data out of the spec");
    return false;
  }
  return true;
}

std::optional<YAML::Node> load_yaml(const std::string& path, const std::string& display_path,
                                    const YamlLimits& limits, Diagnostics& diags, std::string* text_out) {
  std::string text;
  if (!read_spec_file(path, display_path, limits, diags, text)) return std::nullopt;
  if (text_out) *text_out = text;
  return parse_spec_yaml(text, display_path, limits, diags);
}

std::optional<YAML::Node> parse_spec_yaml(const std::string& text, const std::string& display_path,
                                          const YamlLimits& limits, Diagnostics& diags) {
  diags.add_source(display_path, text);
  if (!check_text(display_path, text, diags)) return std::nullopt;
  Composer composer(limits, text);
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(composer)) {
    }
  } catch (const Composer::Stop&) {
  } catch (const YAML::DeepRecursion& e) {
    diags.error(ErrorKind::yaml_syntax, mark_loc(display_path, e.mark), "YAML nests too deep",
                "a spec nests a few levels: flatten the structure");
    return std::nullopt;
  } catch (const YAML::Exception& e) {
    diags.error(ErrorKind::yaml_syntax, mark_loc(display_path, e.mark), e.msg, syntax_hint(e.msg));
    return std::nullopt;
  }
  if (const auto& p = composer.problem) {
    diags.error(p->kind, mark_loc(display_path, p->mark), p->message, p->hint);
    return std::nullopt;
  }
  if (!composer.root.IsDefined() || composer.root.IsNull()) {
    diags.error(ErrorKind::missing_field, {display_path, 1, 1}, "the spec is empty",
                "a spec is a mapping that starts with `name:`; see docs/spec-format.md");
    return std::nullopt;
  }
  return composer.root;
}

SourceLoc YamlContext::loc(const YAML::Node& node) const {
  if (node.IsDefined() && node.IsNull()) {
    if (auto missing = missing_value_offset(node.Mark().pos)) return offset_loc(file_, text_, *missing);
  }
  return mark_loc(file_, node.Mark());
}

// For `key:` with nothing after it, yaml-cpp marks the null value at the next token, often on the
// next line (past blank and comment lines); the value is missing right after the `:` (or `- `).
// Nullopt for a written null.
std::optional<size_t> YamlContext::missing_value_offset(int pos) const {
  if (pos <= 0 || static_cast<size_t>(pos) > text_.size()) return std::nullopt;
  size_t p = static_cast<size_t>(pos);
  if (p < text_.size() && (text_[p] == '~' || text_.compare(p, 4, "null") == 0 || text_.compare(p, 4, "Null") == 0)) {
    return std::nullopt;
  }
  size_t before = last_content_before(p);
  if (before == std::string::npos || (text_[before] != ':' && text_[before] != '-')) return std::nullopt;
  bool same_line = text_.find('\n', before) >= p;
  if (same_line) return std::nullopt;  // `{type: , ...}`: the mark is already on the line
  return before + 1;
}

// The last character before `p` that is neither blank nor in a comment, or npos.
size_t YamlContext::last_content_before(size_t p) const {
  size_t end = p;  // the line segment [start, end) is examined, then the line before
  while (end > 0) {
    size_t start = text_.rfind('\n', end - 1);
    start = start == std::string::npos ? 0 : start + 1;
    size_t stop = end;
    for (size_t i = start; i < end; ++i) {  // a comment starts at `#` after a blank or at the line start
      if (text_[i] == '#' && (i == start || text_[i - 1] == ' ' || text_[i - 1] == '\t')) {
        stop = i;
        break;
      }
    }
    size_t last = stop > start ? text_.find_last_not_of(" \t\r\n", stop - 1) : std::string::npos;
    if (last != std::string::npos && last >= start) return last;
    if (start == 0) break;
    end = start - 1;
  }
  return std::string::npos;
}

// Offset in the text of the first character of a scalar's value: past its properties (`&name`,
// `!tag`, either first, which yaml-cpp's mark includes) and an opening quote. Nullopt when the
// value is not on the line of the mark.
std::optional<size_t> YamlContext::value_offset(const YAML::Node& node) const {
  int pos = node.Mark().pos;
  if (pos < 0 || static_cast<size_t>(pos) >= text_.size()) return std::nullopt;
  size_t p = static_cast<size_t>(pos);
  for (int property = 0; property < 2 && (text_[p] == '&' || text_[p] == '!'); ++property) {
    size_t after = text_.find_first_of(" \t\r\n", p);
    p = after == std::string::npos ? after : text_.find_first_not_of(" \t", after);
    if (p == std::string::npos || text_[p] == '\r' || text_[p] == '\n') return std::nullopt;
  }
  if (text_[p] == '"' || text_[p] == '\'') ++p;
  return p;
}

SourceLoc YamlContext::value_loc(const YAML::Node& node) const {
  SourceLoc l = loc(node);
  if (auto p = value_offset(node); p && l.column > 0) l.column += static_cast<int>(*p - static_cast<size_t>(node.Mark().pos));
  return l;
}

bool YamlContext::written_as_is(const YAML::Node& node) const {
  auto p = value_offset(node);
  return node.IsScalar() && p && text_.compare(*p, node.Scalar().size(), node.Scalar()) == 0;
}

std::optional<expr::Expr> YamlContext::expression(const YAML::Node& node) const {
  return expr::parse(node.Scalar(), value_loc(node), diags_,
                     written_as_is(node) ? expr::Columns::advance : expr::Columns::fixed);
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
