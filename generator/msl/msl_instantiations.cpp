// Explicit instantiations the simulator leaves out (issue 27 item 5). The launcher calls each
// variant's function directly, which instantiates what runs; a hand-written file's `template
// [[host_name("x")]] [[kernel]] ...` lines (MLX's quantized.metal has about 2,000, in one macro
// invocation, ggml's 600) only cost compile time there. The front end finds them here, as cursors,
// with the lines they (or the macro invocation writing them) occupy; simulator_source() ends with
// that table, and drop_explicit_instantiations() blanks those lines.
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "msl/msl_internal.h"

namespace mtlgen::msl {

namespace {

// The table's opening; it is one comment after the file's last newline, so no line moves.
constexpr std::string_view kTableOpening = "/* mtlgen explicit instantiations:";

// Calls `f` on every declaration at file scope, inside namespaces and `extern "C"` too.
void visit_declarations(CXCursor scope, const std::function<void(CXCursor)>& f) {
  visit_children(scope, [&](CXCursor c) {
    CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_Namespace || k == CXCursor_LinkageSpec) visit_declarations(c, f);
    else f(c);
    return CXChildVisit_Continue;
  });
}

// The annotate attribute `host_name` became in the pre-pass, on an explicitly instantiated kernel.
std::optional<CXCursor> host_name_attribute(CXCursor fn) {
  if (clang_getCursorKind(fn) != CXCursor_FunctionDecl || clang_Cursor_isNull(clang_getSpecializedCursorTemplate(fn)))
    return std::nullopt;
  std::optional<CXCursor> found;
  visit_children(fn, [&](CXCursor c) {
    if (clang_getCursorKind(c) == CXCursor_AnnotateAttr && spelling(c).rfind("mtl_host_name=", 0) == 0) found = c;
    return CXChildVisit_Continue;
  });
  return found;
}

// Whether the instantiation at `offset` is written by a macro: the location clang gives is then
// the invocation's, a name the user files `#define`. (libclang's spelling location is the
// expansion's too, so it cannot tell.)
bool written_in_a_macro(Context& ctx, const UserFile& f, unsigned offset) {
  size_t i = f.token_at(offset);
  return i < f.tokens.size() && f.tokens[i].kind == CXToken_Identifier && ctx.definition_of_macro(f.tokens[i].text);
}

// Index of the token closing the bracket f.tokens[open] opens, or of the `;` ending a
// declaration from `open` on (bracket depth 0); tokens.size() if none.
size_t matching_end(const UserFile& f, size_t open, bool until_semicolon) {
  int depth = 0;
  for (size_t i = open; i < f.tokens.size(); ++i) {
    const std::string& t = f.tokens[i].text;
    if (t == "(" || t == "[" || t == "{") ++depth;
    if (t == ")" || t == "]" || t == "}") --depth;
    if (until_semicolon ? (t == ";" && depth == 0) : depth == 0) return i;
  }
  return f.tokens.size();
}

struct Span {
  size_t first = 0;  // token indices, inclusive
  size_t last = 0;
};

// The tokens of the instantiation whose host_name attribute is at `at`: from `template` to its
// `;`, or the whole macro invocation that writes it (its name, arguments and a `;` after them).
std::optional<Span> instantiation_span(const UserFile& f, unsigned at, bool macro) {
  size_t i = f.token_at(at);
  if (i >= f.tokens.size()) return std::nullopt;
  if (macro) {
    size_t last = i + 1 < f.tokens.size() && f.tokens[i + 1].text == "(" ? matching_end(f, i + 1, false) : i;
    if (last >= f.tokens.size()) return std::nullopt;
    if (last + 1 < f.tokens.size() && f.tokens[last + 1].text == ";") ++last;
    return Span{i, last};
  }
  size_t first = i;
  while (first > 0 && f.tokens[first].text != "template") --first;
  size_t last = matching_end(f, i, true);
  if (f.tokens[first].text != "template" || last >= f.tokens.size()) return std::nullopt;
  return Span{first, last};
}

bool has_newline(const UserFile& f, unsigned begin, unsigned end) { return f.slice(begin, end).find('\n') != std::string_view::npos; }

// Whether nothing but blanks (and a `//` comment after) shares the span's lines.
bool on_lines_of_its_own(const UserFile& f, const Span& s) {
  unsigned begin = f.tokens[s.first].begin, end = f.tokens[s.last].end;
  bool alone_before = s.first == 0 || has_newline(f, f.tokens[s.first - 1].end, begin);
  if (s.last + 1 == f.tokens.size()) return alone_before;
  const Token& next = f.tokens[s.last + 1];
  bool line_comment = next.kind == CXToken_Comment && next.text.rfind("//", 0) == 0;
  return alone_before && (line_comment || has_newline(f, end, next.begin));
}

// Line numbers of offsets in one file, from a table of its newlines built once.
class LineIndex {
 public:
  explicit LineIndex(const std::string& text) {
    for (size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n') newlines_.push_back(i);
  }
  int line_of(unsigned offset) const {
    return 1 + static_cast<int>(std::lower_bound(newlines_.begin(), newlines_.end(), size_t{offset}) - newlines_.begin());
  }

 private:
  std::vector<size_t> newlines_;
};

std::string host_name_of(CXCursor attribute) { return spelling(attribute).substr(std::string_view("mtl_host_name=").size()); }

}  // namespace

std::vector<InstantiationSite> find_instantiation_sites(Context& ctx) {
  struct Site {
    const UserFile* file = nullptr;
    Span span;
    bool droppable = true;
    std::set<std::string> host_names;
  };
  std::map<std::pair<std::string, size_t>, Site> sites;  // by file and first token
  std::vector<FilePos> others;                           // where every other declaration begins
  visit_declarations(clang_getTranslationUnitCursor(ctx.tu()), [&](CXCursor c) {
    std::optional<CXCursor> at = host_name_attribute(c);
    if (!at) {
      FilePos p = ctx.begin(c);
      bool empty_declaration = p.file && p.file->token_at(p.offset) < p.file->tokens.size() &&
                               p.file->tokens[p.file->token_at(p.offset)].text == ";";  // `instantiate(...);`
      if (p.file && !empty_declaration) others.push_back(p);
      return;
    }
    CXSourceLocation l = clang_getCursorLocation(*at);
    FilePos p = ctx.pos(l);
    if (!p.file) return;
    std::optional<Span> span = instantiation_span(*p.file, p.offset, written_in_a_macro(ctx, *p.file, p.offset));
    if (!span) return;
    Site& site = sites[{p.file->path, span->first}];
    site.file = p.file;
    site.span = *span;
    site.host_names.insert(host_name_of(*at));
    if (!on_lines_of_its_own(*p.file, *span)) site.droppable = false;
  });
  // A macro invocation that declares anything else (a kernel it defines) stays whole.
  for (const FilePos& o : others) {
    auto it = sites.upper_bound({o.file->path, o.file->token_at(o.offset)});
    if (it == sites.begin()) continue;
    --it;
    const Site& s = it->second;
    if (s.file == o.file && o.offset >= s.file->tokens[s.span.first].begin && o.offset < s.file->tokens[s.span.last].end)
      it->second.droppable = false;
  }
  std::map<std::string, LineIndex> lines;
  std::vector<InstantiationSite> out;
  for (auto& [key, s] : sites) {
    if (!s.droppable) continue;
    const LineIndex& index = lines.try_emplace(s.file->path, s.file->text).first->second;
    const unsigned begin = s.file->tokens[s.span.first].begin, end = s.file->tokens[s.span.last].end;
    out.push_back({{s.file->path, index.line_of(begin), index.line_of(end)}, begin, end, std::move(s.host_names)});
  }
  return out;
}

std::vector<InstantiationLines> find_instantiation_lines(Context& ctx) {
  std::vector<InstantiationLines> out;
  for (const InstantiationSite& s : find_instantiation_sites(ctx)) out.push_back(s.lines);
  return out;
}

std::string instantiation_table(const std::vector<InstantiationLines>& lines, const std::map<std::string, std::string>& keys) {
  if (lines.empty()) return "";
  std::string table(kTableOpening);
  for (const auto& l : lines) {
    auto key = keys.find(l.file);
    if (key == keys.end()) continue;
    table += " " + std::to_string(l.first) + "-" + std::to_string(l.last) + " " + key->second + ";";
  }
  return table + " */";
}

void drop_explicit_instantiations(std::string& main_text, std::map<std::string, std::string>& headers) {
  size_t at = main_text.rfind(kTableOpening);
  if (at == std::string::npos) return;
  std::istringstream table(main_text.substr(at + kTableOpening.size()));
  std::map<std::string, std::vector<std::pair<int, int>>> blank;  // line ranges, by file key
  for (std::string range, key; table >> range >> key && key.back() == ';';) {
    key.pop_back();
    size_t dash = range.find('-');
    blank[key].emplace_back(std::stoi(range.substr(0, dash)), std::stoi(range.substr(dash + 1)));
  }
  auto blank_lines = [](std::string& text, const std::vector<std::pair<int, int>>& ranges) {
    std::string out;
    out.reserve(text.size());
    int line = text.rfind("#line ", 0) == 0 ? 0 : 1;  // a header's copy: its line 1 follows `#line`
    auto dropped = [&] { return std::any_of(ranges.begin(), ranges.end(), [&](auto r) { return line >= r.first && line <= r.second; }); };
    bool drop = dropped();
    for (char c : text) {
      if (c == '\n') {
        out += c;
        ++line;
        drop = dropped();
      } else if (!drop) {
        out += c;
      }
    }
    text = std::move(out);
  };
  for (const auto& [key, ranges] : blank) {
    if (key == ".") blank_lines(main_text, ranges);
    else if (headers.count(key)) blank_lines(headers[key], ranges);
  }
}

}  // namespace mtlgen::msl
