// GNU array range designators (`float s[N] = { [0 ... N-1] = 0.0f };`, ggml's style), which
// clang and Metal accept in C++ and g++ does not. The simulator's copy value-initialises the array
// (`= {}`) and then sets each range, in order, by a call after the declaration on the same line:
// the same values (a later range overrides an earlier one; each value is evaluated once).
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "msl/msl_internal.h"

namespace mtlgen::msl {

namespace {

bool opens(const std::string& t) { return t == "(" || t == "[" || t == "{"; }
bool closes(const std::string& t) { return t == ")" || t == "]" || t == "}"; }

// Index of the token that closes the bracket opened at tokens[open] (tokens.size() if none).
size_t matching(const UserFile& f, size_t open) {
  int depth = 0;
  for (size_t i = open; i < f.tokens.size(); ++i) {
    if (opens(f.tokens[i].text)) ++depth;
    if (closes(f.tokens[i].text) && --depth == 0) return i;
  }
  return f.tokens.size();
}

// The text of tokens [first, last), as the user wrote it.
std::string text_of(const UserFile& f, size_t first, size_t last) {
  if (first >= last) return {};
  return std::string(f.slice(f.tokens[first].begin, f.tokens[last - 1].end));
}

// One `[first ... last] = value` of an initializer list.
struct Range {
  std::string first, last, value;
};

// Each element of the list whose braces are tokens[open] and tokens[close], when every one is a
// range designator with a plain value; nullopt otherwise (other designators are left to g++).
std::optional<std::vector<Range>> ranges_of(const UserFile& f, size_t open, size_t close) {
  std::vector<Range> ranges;
  for (size_t i = open + 1; i < close;) {
    if (f.tokens[i].text != "[") return std::nullopt;
    size_t bracket = matching(f, i);
    size_t dots = i + 1;
    while (dots < bracket && f.tokens[dots].text != "...") dots = opens(f.tokens[dots].text) ? matching(f, dots) + 1 : dots + 1;
    if (dots >= bracket || bracket + 2 >= close || f.tokens[bracket + 1].text != "=" ||
        f.tokens[bracket + 2].text == "{")
      return std::nullopt;
    size_t end = bracket + 2;
    while (end < close && f.tokens[end].text != ",") end = opens(f.tokens[end].text) ? matching(f, end) + 1 : end + 1;
    ranges.push_back({text_of(f, i + 1, dots), text_of(f, dots + 1, bracket), text_of(f, bracket + 2, end)});
    i = end < close ? end + 1 : close;
  }
  if (ranges.empty()) return std::nullopt;
  return ranges;
}

// Index of the `;` that ends the declaration statement after tokens[i].
size_t statement_end(const UserFile& f, size_t i) {
  while (i < f.tokens.size() && f.tokens[i].text != ";") i = opens(f.tokens[i].text) ? matching(f, i) + 1 : i + 1;
  return i;
}

// Whether an earlier rewrite replaced `offset` (a threadgroup declaration drops its initializer).
bool inside_an_edit(const std::vector<Edit>& edits, unsigned offset) {
  return std::any_of(edits.begin(), edits.end(), [&](const Edit& e) { return e.begin <= offset && offset < e.end; });
}

// A local array variable initialised by range designators: its list becomes `{}` and its ranges
// are set after the statement.
void rewrite_ranges_of(Context& ctx, CXCursor var, CXCursor list, std::vector<Edit>& edits) {
  FilePos at = ctx.begin(list);
  if (!at.file) return;
  const UserFile& f = *at.file;
  size_t open = f.token_at(at.offset);
  if (open >= f.tokens.size() || f.tokens[open].begin != at.offset || f.tokens[open].text != "{") return;
  size_t close = matching(f, open);
  if (close == f.tokens.size()) return;
  auto ranges = ranges_of(f, open, close);
  size_t semicolon = statement_end(f, close + 1);
  if (!ranges || semicolon == f.tokens.size() || inside_an_edit(edits, f.tokens[open].begin)) return;
  edits.push_back({f.tokens[open].begin, f.tokens[close].end, "{}"});
  std::string fills;
  for (const Range& r : *ranges)
    fills += fmt::format(" ::mtlsim::set_range({}, {}, {}, {});", spelling(var), r.first, r.last, r.value);
  edits.push_back({f.tokens[semicolon].end, f.tokens[semicolon].end, fills});
}

bool is_local(CXCursor var) {
  CXCursorKind parent = clang_getCursorKind(clang_getCursorSemanticParent(var));
  return parent == CXCursor_FunctionDecl || parent == CXCursor_FunctionTemplate || parent == CXCursor_CXXMethod ||
         parent == CXCursor_Constructor || parent == CXCursor_LambdaExpr;
}

}  // namespace

void rewrite_range_designators(Context& ctx) {
  std::set<std::pair<std::string, unsigned>> seen;  // a header's lines are met once per include
  visit_children(clang_getTranslationUnitCursor(ctx.tu()), [&](CXCursor c) {
    if (!ctx.in_user_file(c)) return CXChildVisit_Continue;
    if (clang_getCursorKind(c) != CXCursor_VarDecl || !is_local(c)) return CXChildVisit_Recurse;
    visit_children(c, [&](CXCursor child) {
      if (clang_getCursorKind(child) != CXCursor_InitListExpr) return CXChildVisit_Continue;
      FilePos at = ctx.begin(child);
      if (at.file && seen.insert({at.file->path, at.offset}).second)
        rewrite_ranges_of(ctx, c, child, ctx.edits[at.file->path]);
      return CXChildVisit_Continue;
    });
    return CXChildVisit_Recurse;
  });
}

}  // namespace mtlgen::msl
