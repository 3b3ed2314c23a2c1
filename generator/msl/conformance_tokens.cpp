// Metal conformance checks, token helpers: reading declarations from their spelled tokens
// (the parse turns address spaces into empty macros and drops [[attributes]], so the tokens
// are the only place they survive).
#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <map>

#include "msl/conformance_internal.h"

namespace mtlgen::msl {

namespace conformance {

std::string to_string(CXString s) {
  const char* c = clang_getCString(s);
  std::string out = c ? c : "";
  clang_disposeString(s);
  return out;
}

SourceLoc to_loc(CXSourceLocation location) {
  CXFile file = nullptr;
  unsigned line = 0, column = 0, offset = 0;
  clang_getExpansionLocation(location, &file, &line, &column, &offset);
  SourceLoc loc;
  if (file) loc.file = to_string(clang_getFileName(file));
  loc.line = int(line);
  loc.column = int(column);
  return loc;
}

bool is_address_space(const std::string& word) {
  static const std::set<std::string> kWords = {"device",  "constant",   "thread",
                                               "threadgroup", "threadgroup_imageblock",
                                               "ray_data", "object_data"};
  return kWords.count(word) > 0;
}

namespace {

// The index of this thread's check_conformance call (TokenIndex).
thread_local TokenIndex* active_index = nullptr;

// A token as the rules read it: a macro that spells an address space reads as that word.
std::string as_spelled(const std::string& text) {
  if (!active_index) return text;
  const auto& macros = active_index->address_space_macros();
  auto it = macros.find(text);
  return it == macros.end() ? text : it->second;
}

TokenIndex::File lex_file(CXTranslationUnit tu, CXFile f) {
  TokenIndex::File out;
  size_t size = 0;
  if (!clang_getFileContents(tu, f, &size)) return out;
  CXToken* raw = nullptr;
  unsigned count = 0;
  CXSourceRange all =
      clang_getRange(clang_getLocationForOffset(tu, f, 0), clang_getLocationForOffset(tu, f, unsigned(size)));
  clang_tokenize(tu, all, &raw, &count);
  const std::string name = to_string(clang_getFileName(f));
  out.tokens.reserve(count);
  out.ends.reserve(count);
  for (unsigned i = 0; i < count; ++i) {
    Token t;
    t.text = to_string(clang_getTokenSpelling(tu, raw[i]));
    t.kind = clang_getTokenKind(raw[i]);
    unsigned line = 0, column = 0;
    clang_getExpansionLocation(clang_getTokenLocation(tu, raw[i]), nullptr, &line, &column, &t.offset);
    t.loc = {name, int(line), int(column)};
    out.ends.push_back(t.offset + unsigned(t.text.size()));  // a token's extent ends one token late
    out.tokens.push_back(std::move(t));
  }
  clang_disposeTokens(tu, raw, count);
  return out;
}

// Calls `use` with the tokens of `f`: the active index's, else lexed for this call alone.
template <typename Use>
auto with_file(CXTranslationUnit tu, CXFile f, Use use) {
  if (active_index) return use(active_index->file(f));
  return use(lex_file(tu, f));
}

// What clang_tokenize gives for [begin, end) of one file: the token at `begin`, then each next
// one while the previous one ends before `end`.
std::vector<Token> tokens_between(CXTranslationUnit tu, CXFile f, unsigned begin, unsigned end) {
  return with_file(tu, f, [&](const TokenIndex::File& file) {
    auto first = std::lower_bound(file.tokens.begin(), file.tokens.end(), begin,
                                  [](const Token& t, unsigned offset) { return t.offset < offset; });
    std::vector<Token> out;
    for (size_t i = size_t(first - file.tokens.begin()); i < file.tokens.size(); ++i) {
      if (!out.empty() && file.ends[i - 1] >= end) break;
      out.push_back(file.tokens[i]);
      out.back().text = as_spelled(out.back().text);
    }
    return out;
  });
}

}  // namespace

// A range inside a macro expansion (a kernel declared with the `kernel` macro) is read where the
// macro is used; clang_tokenize reads files, and one file at a time.
std::vector<Token> tokenize(CXTranslationUnit tu, CXSourceRange range) {
  CXFile file = nullptr, end_file = nullptr;
  unsigned begin = 0, end = 0;
  clang_getExpansionLocation(clang_getRangeStart(range), &file, nullptr, nullptr, &begin);
  clang_getExpansionLocation(clang_getRangeEnd(range), &end_file, nullptr, nullptr, &end);
  if (!file || file != end_file) return {};
  return tokens_between(tu, file, begin, end);
}

namespace {

unsigned offset_of(CXSourceLocation location) {
  unsigned offset = 0;
  clang_getExpansionLocation(location, nullptr, nullptr, nullptr, &offset);
  return offset;
}

// Index of the bracket closing the one at `open`, or tokens.size().
size_t matching(const std::vector<Token>& tokens, size_t open, const char* left, const char* right) {
  int depth = 0;
  for (size_t i = open; i < tokens.size(); ++i) {
    if (tokens[i].text == left) ++depth;
    if (tokens[i].text == right && --depth == 0) return i;
    if (std::string(right) == ">" && tokens[i].text == ">>" && (depth -= 2) <= 0) return i;
  }
  return tokens.size();
}

std::vector<Token> slice(const std::vector<Token>& tokens, size_t begin, size_t end) {
  if (begin >= end || begin >= tokens.size()) return {};
  return {tokens.begin() + long(begin), tokens.begin() + long(std::min(end, tokens.size()))};
}

// A declaration that starts with an address space starts, for clang, after it: the word is an
// empty macro. Recover such words spelled right before `start`.
std::vector<Token> leading_address_spaces(CXTranslationUnit tu, CXSourceLocation start) {
  CXFile f = nullptr;
  unsigned offset = 0;
  clang_getExpansionLocation(start, &f, nullptr, nullptr, &offset);
  if (!f) return {};
  return with_file(tu, f, [&](const TokenIndex::File& file) {
    auto end = std::lower_bound(file.tokens.begin(), file.tokens.end(), offset,
                                [](const Token& t, unsigned at) { return t.offset < at; });
    auto begin = end;
    while (begin != file.tokens.begin() && is_address_space(as_spelled(std::prev(begin)->text))) --begin;
    std::vector<Token> out(begin, end);
    for (Token& t : out) t.text = as_spelled(t.text);
    return out;
  });
}

// The cursor's tokens, with the address spaces spelled before it.
std::vector<Token> spelled(CXTranslationUnit tu, CXSourceRange range) {
  auto tokens = leading_address_spaces(tu, clang_getRangeStart(range));
  auto rest = tokenize(tu, range);
  tokens.insert(tokens.end(), rest.begin(), rest.end());
  return tokens;
}

// Tokens before the cursor's name; an unnamed parameter's type ends at `=`, `[[` or the end.
std::vector<Token> before_name(const std::vector<Token>& tokens, unsigned name_offset) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    // `operator*` is named at its keyword: its `*` is the name, not a declarator.
    const bool name = tokens[i].kind == CXToken_Identifier || tokens[i].text == "operator";
    if (tokens[i].offset == name_offset && name) return slice(tokens, 0, i);
    if (tokens[i].text == "=" || (tokens[i].text == "[" && i + 1 < tokens.size() && tokens[i + 1].text == "["))
      return slice(tokens, 0, i);
  }
  return tokens;
}

// A function header without its attributes: `[[...]]`, and what the pre-pass made of Metal's
// (`__MTL_MAXTPT(TG * 2)` multiplies; it declares no pointer).
std::vector<Token> without_attributes(const std::vector<Token>& tokens) {
  std::vector<Token> out;
  for (size_t i = 0; i < tokens.size(); ++i) {
    bool macro = tokens[i].text.rfind("__MTL_", 0) == 0 && i + 1 < tokens.size() && tokens[i + 1].text == "(";
    if (macro) {
      i = matching(tokens, i + 1, "(", ")");
    } else if (tokens[i].text == "[" && i + 1 < tokens.size() && tokens[i + 1].text == "[") {
      i = matching(tokens, i, "[", "]");
    } else {
      out.push_back(tokens[i]);
    }
  }
  return out;
}

// Between the first `open` and its match: the target type of (T)x and static_cast<T>(x).
std::vector<Token> first_group(const std::vector<Token>& tokens, const char* open, const char* close) {
  for (size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i].text == open) return slice(tokens, i + 1, matching(tokens, i, open, close));
  return {};
}

// A function's tokens stop at its body so that the body's own declarations are not read twice.
CXSourceRange header_range(CXTranslationUnit tu, CXCursor cursor) {
  CXSourceRange extent = clang_getCursorExtent(cursor);
  CXSourceLocation body_start = clang_getRangeEnd(extent);
  clang_visitChildren(
      cursor,
      [](CXCursor child, CXCursor, CXClientData data) {
        if (clang_getCursorKind(child) != CXCursor_CompoundStmt) return CXChildVisit_Continue;
        *static_cast<CXSourceLocation*>(data) = clang_getRangeStart(clang_getCursorExtent(child));
        return CXChildVisit_Break;
      },
      &body_start);
  (void)tu;
  return clang_getRange(clang_getRangeStart(extent), body_start);
}

// Kinds of the template parameters of the function a DeclRefExpr names (its primary template's),
// in order: true for a type parameter. Empty when it names an overload set or no template.
std::vector<bool> type_parameter_kinds(CXCursor ref) {
  CXCursor callee = clang_getCursorReferenced(ref);
  if (clang_getCursorKind(callee) != CXCursor_FunctionTemplate) callee = clang_getSpecializedCursorTemplate(callee);
  std::vector<bool> kinds;
  if (clang_Cursor_isNull(callee) || clang_getCursorKind(callee) != CXCursor_FunctionTemplate) return kinds;
  clang_visitChildren(
      callee,
      [](CXCursor child, CXCursor, CXClientData data) {
        CXCursorKind k = clang_getCursorKind(child);
        if (k == CXCursor_TemplateTypeParameter || k == CXCursor_NonTypeTemplateParameter ||
            k == CXCursor_TemplateTemplateParameter) {
          static_cast<std::vector<bool>*>(data)->push_back(k == CXCursor_TemplateTypeParameter);
        }
        return CXChildVisit_Continue;
      },
      &kinds);
  return kinds;
}

// The explicit template arguments that are types, each kept inside `<...>`: `tg_sum<TG * 2>`
// multiplies, `as_ptr<device float*>` points. Unknown parameter kinds: nothing is checked.
std::vector<Token> type_template_arguments(CXTranslationUnit tu, CXCursor ref) {
  auto tokens = tokenize(tu, clang_getCursorExtent(ref));
  if (tokens.size() < 2 || tokens[1].text != "<") return {};
  std::vector<bool> is_type = type_parameter_kinds(ref);
  const size_t close = matching(tokens, 1, "<", ">");
  if (close >= tokens.size()) return {};
  std::vector<Token> out;
  size_t begin = 2;
  int depth = 0;
  for (size_t i = 2, arg = 0; i <= close && i < tokens.size(); ++i) {
    const std::string& t = tokens[i].text;
    if (t == "(" || t == "[" || t == "<" || t == "{") ++depth;
    if ((t == ")" || t == "]" || t == ">" || t == "}") && i != close) --depth;
    if (i != close && !(t == "," && depth == 0)) continue;
    if (arg < is_type.size() && is_type[arg]) {
      out.push_back(tokens[1]);  // `<`
      auto group = slice(tokens, begin, i);
      out.insert(out.end(), group.begin(), group.end());
      out.push_back(tokens[close]);  // `>`
    }
    ++arg;
    begin = i + 1;
  }
  return out;
}

}  // namespace

std::vector<Token> type_tokens(CXTranslationUnit tu, CXCursor cursor) {
  const CXCursorKind kind = clang_getCursorKind(cursor);
  const unsigned name = offset_of(clang_getCursorLocation(cursor));
  switch (kind) {
    case CXCursor_FunctionDecl:
    case CXCursor_CXXMethod:
    case CXCursor_FunctionTemplate:
      return without_attributes(before_name(spelled(tu, header_range(tu, cursor)), name));
    case CXCursor_ParmDecl:
    case CXCursor_VarDecl:
    case CXCursor_FieldDecl:
      return before_name(spelled(tu, clang_getCursorExtent(cursor)), name);
    case CXCursor_TypedefDecl: {
      auto tokens = before_name(tokenize(tu, clang_getCursorExtent(cursor)), name);
      return tokens.empty() ? tokens : slice(tokens, 1, tokens.size());  // drop `typedef`
    }
    case CXCursor_TypeAliasDecl: {
      auto tokens = tokenize(tu, clang_getCursorExtent(cursor));
      for (size_t i = 0; i < tokens.size(); ++i)
        if (tokens[i].text == "=") return slice(tokens, i + 1, tokens.size());
      return {};
    }
    case CXCursor_CStyleCastExpr:
      return first_group(tokenize(tu, clang_getCursorExtent(cursor)), "(", ")");
    case CXCursor_CXXStaticCastExpr:
    case CXCursor_CXXReinterpretCastExpr:
    case CXCursor_CXXConstCastExpr:
    case CXCursor_CXXDynamicCastExpr:
      return first_group(tokenize(tu, clang_getCursorExtent(cursor)), "<", ">");
    case CXCursor_CXXFunctionalCastExpr: {
      auto tokens = tokenize(tu, clang_getCursorExtent(cursor));
      for (size_t i = 0; i < tokens.size(); ++i)
        if (tokens[i].text == "(" || tokens[i].text == "{") return slice(tokens, 0, i);
      return tokens;
    }
    case CXCursor_DeclRefExpr:  // explicit template arguments: f<device float*>(p)
      return type_template_arguments(tu, cursor);
    default:
      return {};
  }
}

std::vector<Attribute> attributes_in(const std::vector<Token>& tokens) {
  std::vector<Attribute> out;
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    if (tokens[i].text != "[" || tokens[i + 1].text != "[") continue;
    size_t end = matching(tokens, i, "[", "]");
    for (size_t j = i + 2; j < end; ++j) {
      if (tokens[j].kind != CXToken_Identifier && tokens[j].kind != CXToken_Keyword) continue;
      Attribute a{tokens[j].text, {}, tokens[j].loc};
      if (j + 1 < end && tokens[j + 1].text == "(") {
        size_t close = matching(tokens, j + 1, "(", ")");
        a.args = slice(tokens, j + 2, close);
        j = close;
      }
      out.push_back(std::move(a));
      while (j + 1 < end && tokens[j + 1].text != ",") ++j;  // to the next item
    }
    i = end;
  }
  return out;
}

std::vector<std::vector<Token>> parameter_tokens(CXTranslationUnit tu, CXCursor function) {
  auto tokens = tokenize(tu, header_range(tu, function));
  const unsigned name = offset_of(clang_getCursorLocation(function));
  size_t open = 0;
  while (open < tokens.size() && (tokens[open].offset <= name || tokens[open].text != "(")) ++open;
  std::vector<std::vector<Token>> params;
  if (open >= tokens.size()) return params;
  const size_t close = matching(tokens, open, "(", ")");
  std::vector<Token> current;
  int depth = 0;
  for (size_t i = open + 1; i < close; ++i) {
    const std::string& t = tokens[i].text;
    if (t == "(" || t == "[" || t == "<" || t == "{") ++depth;
    if (t == ")" || t == "]" || t == ">" || t == "}") --depth;
    if (t == ">>") depth -= 2;
    if (t == "," && depth == 0) {
      params.push_back(std::move(current));
      current.clear();
      continue;
    }
    current.push_back(tokens[i]);
  }
  if (!current.empty()) params.push_back(std::move(current));
  return params;
}

Version parse_version(const std::string& text) {
  Version v;
  char* end = nullptr;
  v.major = int(std::strtol(text.c_str(), &end, 10));
  if (end && *end == '.') v.minor = int(std::strtol(end + 1, nullptr, 10));
  return v;
}

void Reporter::report(const SourceLoc& loc, const std::string& what, const Citation& where, std::string hint) {
  if (!seen_.emplace(loc.file, loc.line, loc.column, what).second) return;
  diags_.error(support::ErrorKind::msl_conformance, loc, what + " (" + where.text + ")", std::move(hint));
}

namespace {

bool is_specifier(const std::string& word, const std::map<std::string, std::string>& known) {
  static const std::set<std::string> kWords = {"static", "const", "constexpr", "volatile", "inline"};
  return kWords.count(word) || is_address_space(word) || known.count(word);
}

// `#define NAME words` where every word is a specifier and one is an address space (MLX's
// `static constant constexpr const`): NAME -> that address space. `tokens`: one file's.
void collect_address_space_macros(const std::vector<Token>& tokens, std::map<std::string, std::string>& out) {
  for (size_t i = 0; i + 2 < tokens.size(); ++i) {
    if (tokens[i].text != "#" || tokens[i + 1].text != "define" || tokens[i + 2].kind != CXToken_Identifier) continue;
    const int line = tokens[i + 2].loc.line;
    std::string space;
    bool only_specifiers = true;
    size_t j = i + 3;
    for (; j < tokens.size() && tokens[j].loc.line == line && tokens[j].text != "\\"; ++j) {
      only_specifiers = only_specifiers && is_specifier(tokens[j].text, out);
      if (space.empty() && is_address_space(tokens[j].text)) space = tokens[j].text;
      if (space.empty() && out.count(tokens[j].text)) space = out.at(tokens[j].text);
    }
    if (only_specifiers && !space.empty() && j > i + 3) out[tokens[i + 2].text] = space;
    i = j - 1;
  }
}

}  // namespace

TokenIndex::TokenIndex(CXTranslationUnit tu, const std::set<std::string>& files) : tu_(tu) {
  for (const std::string& path : files)
    if (CXFile f = clang_getFile(tu, path.c_str())) collect_address_space_macros(file(f).tokens, macros_);
  active_index = this;
}

TokenIndex::~TokenIndex() { active_index = nullptr; }

const TokenIndex::File& TokenIndex::file(CXFile f) {
  auto [it, fresh] = files_.try_emplace(f);
  if (fresh) it->second = lex_file(tu_, f);
  return it->second;
}

}  // namespace conformance

}  // namespace mtlgen::msl
