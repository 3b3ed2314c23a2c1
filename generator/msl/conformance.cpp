// Metal conformance checks: walks what the user spelled (never the shim's own C++) and reports
// each construct Apple's Metal compiler rejects, citing the specification section it comes from.
// Sections: token helpers, address spaces, kernel signatures, then the walk over the AST.
// Citations and shared declarations: conformance_internal.h.
#include "msl/conformance.h"

#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>

#include "msl/conformance_internal.h"

namespace mtlgen::msl {

// ---- tokens
// Reading declarations from their spelled tokens: the parse turns address spaces into empty macros
// and drops [[attributes]], so the tokens are the only place they survive.
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

// clang_tokenize reads files, not macro expansions: a range that starts inside one (a kernel
// declared with the `kernel` macro) is moved to where the macro is used.
CXSourceLocation in_file(CXTranslationUnit tu, CXSourceLocation location) {
  CXFile file = nullptr;
  unsigned offset = 0;
  clang_getExpansionLocation(location, &file, nullptr, nullptr, &offset);
  return file ? clang_getLocationForOffset(tu, file, offset) : location;
}

}  // namespace

std::vector<Token> tokenize(CXTranslationUnit tu, CXSourceRange range) {
  CXToken* raw = nullptr;
  unsigned count = 0;
  range = clang_getRange(in_file(tu, clang_getRangeStart(range)), in_file(tu, clang_getRangeEnd(range)));
  clang_tokenize(tu, range, &raw, &count);
  std::vector<Token> tokens;
  tokens.reserve(count);
  for (unsigned i = 0; i < count; ++i) {
    CXSourceLocation at = clang_getTokenLocation(tu, raw[i]);
    Token t;
    t.text = to_string(clang_getTokenSpelling(tu, raw[i]));
    t.kind = clang_getTokenKind(raw[i]);
    t.loc = to_loc(at);
    clang_getExpansionLocation(at, nullptr, nullptr, nullptr, &t.offset);
    tokens.push_back(std::move(t));
  }
  clang_disposeTokens(tu, raw, count);
  return tokens;
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
  CXFile file = nullptr;
  unsigned offset = 0;
  clang_getExpansionLocation(start, &file, nullptr, nullptr, &offset);
  if (!file) return {};
  const unsigned from = offset > 256 ? offset - 256 : 0;  // a few words back is enough
  auto tokens = tokenize(tu, clang_getRange(clang_getLocationForOffset(tu, file, from),
                                            clang_getLocationForOffset(tu, file, offset)));
  size_t end = tokens.size();
  while (end > 0 && tokens[end - 1].offset >= offset) --end;
  size_t begin = end;
  while (begin > 0 && is_address_space(tokens[begin - 1].text)) --begin;
  return slice(tokens, begin, end);
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
    if (tokens[i].offset == name_offset && tokens[i].kind == CXToken_Identifier) return slice(tokens, 0, i);
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

}  // namespace conformance

// ---- address_space
// Every pointer and reference type Metal sees must say which memory it points into: Apple's
// compiler rejects `float* p` ("pointer type must have explicit address space qualifier") in
// parameters, locals, fields, aliases, casts and template arguments alike.
namespace conformance {

namespace {

// One level of a declarator: the words before a `*` or `&` (or inside one template argument).
struct Level {
  bool has_address_space = false;
  bool deduced = false;  // auto, decltype(...) or a template type parameter: the space comes
                         // with the deduced type, so nothing needs spelling here
};

bool is_indirection(const std::string& t) { return t == "*" || t == "&" || t == "&&"; }

}  // namespace

void check_address_spaces(const Context& ctx, const std::vector<Token>& tokens, const Scope& scope) {
  std::vector<Level> levels{Level{}};
  Level base;  // the declaration's own base type, for `device float *a, *b`
  bool base_set = false;
  for (const Token& tok : tokens) {
    const std::string& t = tok.text;
    Level& top = levels.back();
    if (is_address_space(t)) {
      top.has_address_space = true;
    } else if (t == "auto" || t == "decltype" || scope.template_params.count(t)) {
      top.deduced = true;
    } else if (t == "<" || t == "(") {
      levels.push_back(Level{});
    } else if ((t == ">" || t == ")") && levels.size() > 1) {
      levels.pop_back();
    } else if (t == ">>") {
      for (int i = 0; i < 2 && levels.size() > 1; ++i) levels.pop_back();
    } else if (t == ",") {
      top = (levels.size() == 1 && base_set) ? base : Level{};
    } else if (is_indirection(t)) {
      if (!top.has_address_space && !top.deduced)
        ctx.reporter.report(tok.loc,
                            std::string(t == "*" ? "pointer" : "reference") +
                                " type without an explicit address space is not allowed in Metal",
                            kAddressSpaces,
                            "say where it points: `device`, `constant`, `threadgroup` or `thread`, "
                            "e.g. `device const float* p` or `thread float& x`");
      if (levels.size() == 1 && !base_set) {
        base = top;
        base_set = true;
      }
      top = Level{false, top.deduced};  // the pointer itself is the next level
    }
  }
}

}  // namespace conformance

// ---- kernel
// Kernel signatures: what Metal accepts as a compute entry point's return type and arguments.
namespace conformance {

namespace {

constexpr int kArgumentTableEntries = 31;  // buffer and threadgroup tables: indices 0..30

// Builtins that describe a position or size in up to 3 dimensions take ushort or uint and their
// 2- and 3-vectors; the rest (indices and counts) a scalar ushort or uint.
const std::set<std::string> kPositionBuiltins = {
    "thread_position_in_grid",  "thread_position_in_threadgroup",   "threadgroup_position_in_grid",
    "threads_per_grid",         "threads_per_threadgroup",          "threadgroups_per_grid",
    "grid_origin",              "grid_size",                        "dispatch_threads_per_threadgroup"};
const std::set<std::string> kScalarBuiltins = {
    "thread_index_in_threadgroup",   "thread_index_in_simdgroup",     "thread_index_in_quadgroup",
    "simdgroup_index_in_threadgroup", "quadgroup_index_in_threadgroup", "simdgroups_per_threadgroup",
    "quadgroups_per_threadgroup",    "threads_per_simdgroup",         "thread_execution_width",
    "dispatch_simdgroups_per_threadgroup", "dispatch_quadgroups_per_threadgroup"};

struct Param {
  CXCursor cursor;
  std::vector<Token> tokens;  // as spelled, attributes included
  std::vector<Attribute> attributes;
};

std::vector<Param> params_of(const Context& ctx, CXCursor kernel) {
  std::vector<CXCursor> cursors;
  clang_visitChildren(
      kernel,
      [](CXCursor c, CXCursor, CXClientData data) {
        if (clang_getCursorKind(c) == CXCursor_ParmDecl) static_cast<std::vector<CXCursor>*>(data)->push_back(c);
        return CXChildVisit_Continue;
      },
      &cursors);
  auto spelled = parameter_tokens(ctx.tu, kernel);
  std::vector<Param> params;
  for (size_t i = 0; i < cursors.size() && i < spelled.size(); ++i)
    params.push_back({cursors[i], spelled[i], attributes_in(spelled[i])});
  return params;
}

bool spells(const std::vector<Token>& tokens, const std::string& word) {
  for (const Token& t : tokens) {
    if (t.text == "[") return false;  // attributes follow the type
    if (t.text == word) return true;
  }
  return false;
}

std::optional<long> integer_argument(const Attribute& a) {
  if (a.args.size() != 1 || a.args[0].kind != CXToken_Literal) return std::nullopt;
  try {
    return std::stol(a.args[0].text, nullptr, 0);
  } catch (...) {
    return std::nullopt;
  }
}

// Canonical spellings of what a builtin may be declared as (in the shim, vectors are metal::vec).
bool allowed_builtin_type(CXType type, bool per_dimension) {
  CXType canonical = clang_getCanonicalType(type);
  if (canonical.kind == CXType_UInt || canonical.kind == CXType_UShort) return true;
  if (!per_dimension) return false;
  const std::string spelled = to_string(clang_getTypeSpelling(canonical));
  for (const char* element : {"unsigned int", "unsigned short"})
    for (int n : {2, 3})
      if (spelled.find("vec<" + std::string(element) + ", " + std::to_string(n) + ">") != std::string::npos)
        return true;
  return false;
}

void check_return_type(const Context& ctx, CXCursor kernel) {
  if (clang_getCursorResultType(kernel).kind == CXType_Void) return;
  auto tokens = type_tokens(ctx.tu, kernel);
  SourceLoc at = to_loc(clang_getCursorLocation(kernel));
  for (const Token& t : tokens)
    if (t.kind != CXToken_Punctuation && t.text != "kernel" && t.text != "template" && t.text != "__attribute__" &&
        t.text != "annotate" && t.kind != CXToken_Literal) {
      at = t.loc;
      break;
    }
  ctx.reporter.report(at, "a kernel function must return void", kFunctions,
                      "write results through a `device` buffer argument and declare the kernel `void`");
}

void check_index(const Context& ctx, const Attribute& a, std::map<long, SourceLoc>& used, const char* table,
                 bool guarded) {
  auto index = integer_argument(a);
  if (!index) return;  // a macro or constant expression: the front end resolves it
  const SourceLoc& at = a.args[0].loc;
  if (*index < 0 || *index >= kArgumentTableEntries) {
    ctx.reporter.report(at,
                        "[[" + a.name + "(" + std::to_string(*index) + ")]] is outside the " + table +
                            " argument table (indices 0..30)",
                        kArgumentTables, "use an index from 0 to 30; pack small arguments into one struct");
    return;
  }
  if (guarded) return;  // arguments under different function constants may share an index
  auto [it, inserted] = used.emplace(*index, at);
  if (!inserted)
    ctx.reporter.report(at,
                        "[[" + a.name + "(" + std::to_string(*index) + ")]] is already used by another argument of this kernel",
                        kArgumentTables, "give every " + std::string(table) + " argument its own index");
}

void check_builtin(const Context& ctx, const Param& p, const Attribute& a, const Scope& scope) {
  const bool per_dimension = kPositionBuiltins.count(a.name) > 0;
  if (!per_dimension && !kScalarBuiltins.count(a.name)) return;
  for (const Token& t : p.tokens)
    if (scope.template_params.count(t.text)) return;  // known only once instantiated
  if (allowed_builtin_type(clang_getCursorType(p.cursor), per_dimension)) return;
  const std::string type = to_string(clang_getTypeSpelling(clang_getCursorType(p.cursor)));
  ctx.reporter.report(p.tokens.empty() ? a.loc : p.tokens.front().loc,
                      "[[" + a.name + "]] cannot be declared as `" + type + "`", kBuiltins,
                      per_dimension ? "declare it as uint, uint2 or uint3 (or ushort, ushort2, ushort3)"
                                    : "declare it as uint (or ushort)");
}

// A kernel argument that is a pointer or reference must live in device, constant or threadgroup
// memory (thread memory belongs to one thread, so the host cannot bind it); a threadgroup
// argument is memory the host sizes, so it cannot be a value.
void check_argument_space(const Context& ctx, const Param& p) {
  const bool indirect = spells(p.tokens, "*") || spells(p.tokens, "&");
  if (spells(p.tokens, "thread") && indirect)
    ctx.reporter.report(p.tokens.front().loc, "a kernel argument cannot point into the `thread` address space",
                        kAddressSpaces, "use `device` (or `constant` for read-only data)");
  if (spells(p.tokens, "threadgroup") && !indirect)
    ctx.reporter.report(p.tokens.front().loc, "a `threadgroup` kernel argument must be a pointer or reference",
                        kAddressSpaces, "declare it `threadgroup T* name [[threadgroup(n)]]`");
}

}  // namespace

bool is_kernel(CXCursor cursor) {
  bool found = false;
  clang_visitChildren(
      cursor,
      [](CXCursor c, CXCursor, CXClientData data) {
        if (clang_getCursorKind(c) == CXCursor_AnnotateAttr && to_string(clang_getCursorSpelling(c)) == "mtl_kernel") {
          *static_cast<bool*>(data) = true;
          return CXChildVisit_Break;
        }
        return CXChildVisit_Continue;
      },
      &found);
  return found;
}

void check_kernel(const Context& ctx, CXCursor kernel, const Scope& scope) {
  check_return_type(ctx, kernel);
  std::map<long, SourceLoc> buffers, threadgroups;
  for (const Param& p : params_of(ctx, kernel)) {
    check_argument_space(ctx, p);
    bool guarded = false;
    for (const Attribute& a : p.attributes) guarded = guarded || a.name == "function_constant";
    for (const Attribute& a : p.attributes) {
      if (a.name == "buffer") check_index(ctx, a, buffers, "buffer", guarded);
      // The parse may respell [[threadgroup(n)]] (its word is an empty macro) as mtlsim_tgrp.
      if (a.name == "threadgroup" || a.name == "mtlsim_tgrp")
        check_index(ctx, a, threadgroups, "threadgroup", guarded);
      check_builtin(ctx, p, a, scope);
    }
  }
}

}  // namespace conformance

// ---- the walk

namespace {

using namespace conformance;

std::string file_name(CXFile file) { return file ? conformance::to_string(clang_getFileName(file)) : ""; }

std::string file_of(CXSourceLocation location) {
  CXFile file = nullptr;
  clang_getExpansionLocation(location, &file, nullptr, nullptr, nullptr);
  return file_name(file);
}

// The user's files: the main file and the headers it includes (transitively) that are neither
// system headers nor the shim's. Built from the inclusion list, which lists each include once.
struct Inclusion {
  std::string file, includer;
  SourceLoc directive;
  bool system = false;
};

std::vector<Inclusion> inclusions(CXTranslationUnit tu) {
  std::vector<Inclusion> out;
  clang_getInclusions(
      tu,
      [](CXFile included, CXSourceLocation* stack, unsigned depth, CXClientData data) {
        if (depth == 0) return;  // the main file
        Inclusion inc{file_name(included), file_of(stack[0]), to_loc(stack[0]), false};
        static_cast<std::vector<Inclusion>*>(data)->push_back(std::move(inc));
      },
      &out);
  for (Inclusion& inc : out) {
    CXFile file = clang_getFile(tu, inc.file.c_str());
    inc.system = file && clang_Location_isInSystemHeader(clang_getLocation(tu, file, 1, 1));
  }
  return out;
}

bool is_metal_header(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  return name.rfind("metal_", 0) == 0;
}

std::set<std::string> user_files(const std::vector<Inclusion>& incs, const std::string& main_file) {
  std::set<std::string> users{main_file};
  for (bool grew = true; grew;) {
    grew = false;
    for (const Inclusion& inc : incs) {
      if (users.count(inc.file) || !users.count(inc.includer)) continue;
      if (inc.system || is_metal_header(inc.file)) continue;
      grew = users.insert(inc.file).second || grew;
    }
  }
  return users;
}

class Checker {
 public:
  Checker(const Context& ctx, std::set<std::string> users) : ctx_(ctx), users_(std::move(users)) {}

  void run(const std::vector<Inclusion>& incs) {
    check_includes(incs);
    walk(clang_getTranslationUnitCursor(ctx_.tu), Scope{});
    check_recursion();
  }

 private:
  const Context& ctx_;
  std::set<std::string> users_;
  struct Call {
    std::string callee;
    SourceLoc loc;
  };
  std::map<std::string, std::vector<Call>> calls_;  // caller USR -> calls it makes

  bool in_user_file(CXCursor c) const { return users_.count(file_of(clang_getCursorLocation(c))) > 0; }
  SourceLoc loc(CXCursor c) const { return to_loc(clang_getCursorLocation(c)); }
  void report(const SourceLoc& at, const std::string& what, const Citation& where, std::string hint) const {
    ctx_.reporter.report(at, what, where, std::move(hint));
  }

  // The C++ standard library is not Metal's: an included system header that is not metal_*.
  void check_includes(const std::vector<Inclusion>& incs) const {
    for (const Inclusion& inc : incs)
      if (users_.count(inc.includer) && inc.system && !is_metal_header(inc.file))
        report(inc.directive,
               "the C++ standard library header <" + std::filesystem::path(inc.file).filename().string() +
                   "> is not available in Metal",
               kCxxRestrictions, "include <metal_stdlib> and use the metal:: equivalents");
  }

  static std::vector<CXCursor> children(CXCursor c) {
    std::vector<CXCursor> out;
    clang_visitChildren(
        c,
        [](CXCursor child, CXCursor, CXClientData data) {
          static_cast<std::vector<CXCursor>*>(data)->push_back(child);
          return CXChildVisit_Continue;
        },
        &out);
    return out;
  }

  static bool is_function(CXCursorKind k) {
    return k == CXCursor_FunctionDecl || k == CXCursor_CXXMethod || k == CXCursor_FunctionTemplate ||
           k == CXCursor_Constructor || k == CXCursor_Destructor;
  }

  // Scope of `c`'s children: template parameters and the enclosing function.
  static Scope enter(CXCursor c, Scope scope) {
    for (CXCursor child : children(c))
      if (clang_getCursorKind(child) == CXCursor_TemplateTypeParameter)
        scope.template_params.insert(conformance::to_string(clang_getCursorSpelling(child)));
    if (is_function(clang_getCursorKind(c))) scope.function_usr = conformance::to_string(clang_getCursorUSR(c));
    return scope;
  }

  void walk(CXCursor c, const Scope& scope) {
    for (CXCursor child : children(c)) {
      if (!in_user_file(child)) continue;  // the shim, the C++ headers: not the user's code
      const Scope inner = enter(child, scope);
      check(child, inner);
      walk(child, inner);
    }
  }

  void check(CXCursor c, const Scope& scope) {
    check_excluded_cxx(c);
    check_declaration(c, scope);
    check_versioned(c, scope);
    if (is_function(clang_getCursorKind(c)) && is_kernel(c)) check_kernel(ctx_, c, scope);
  }

  void excluded(CXCursor c, const std::string& what, std::string hint) const {
    report(loc(c), what + " not supported in Metal", kCxxRestrictions, std::move(hint));
  }

  // Location of the first token `word` in `c` (the keyword that makes it C++-only), else `c`'s.
  SourceLoc keyword(CXCursor c, const std::string& word) const {
    for (const Token& t : tokenize(ctx_.tu, clang_getCursorExtent(c)))
      if (t.text == word) return t.loc;
    return loc(c);
  }

  void check_excluded_cxx(CXCursor c) const {
    switch (clang_getCursorKind(c)) {
      case CXCursor_LambdaExpr:
        return excluded(c, "lambda expressions are", "write a helper function (a template if it must be generic)");
      case CXCursor_CXXNewExpr:
        return excluded(c, "`new` is", "use a local variable, or memory passed in as a `device` buffer");
      case CXCursor_CXXDeleteExpr:
        return excluded(c, "`delete` is", "Metal has no heap: drop the allocation");
      case CXCursor_CXXThrowExpr:
        return excluded(c, "exceptions (`throw`) are", "report errors through an output buffer");
      case CXCursor_CXXTryStmt:
        return excluded(c, "exception handling (`try`/`catch`) is", "check conditions explicitly");
      case CXCursor_GotoStmt:
      case CXCursor_IndirectGotoStmt:
        return excluded(c, "`goto` is", "use structured control flow: break, continue, return");
      case CXCursor_CXXTypeidExpr:
        return excluded(c, "run-time type identification (`typeid`) is", "dispatch on types at compile time with templates");
      case CXCursor_CXXDynamicCastExpr:
        return excluded(c, "`dynamic_cast` is", "use static_cast, or templates instead of class hierarchies");
      case CXCursor_CXXBaseSpecifier:
        return excluded(c, "derived classes are", "use composition: make the base a member");
      case CXCursor_NamespaceRef:
        if (conformance::to_string(clang_getCursorSpelling(c)) == "std")
          return excluded(c, "the C++ standard library (`std::`) is", "use the metal:: equivalents from <metal_stdlib>");
        return;
      default:
        return;
    }
  }

  void check_storage(CXCursor c) const {
    if (clang_Cursor_getStorageClass(c) == CX_SC_Register)
      report(keyword(c, "register"), "the `register` storage class is not supported in Metal", kCxxRestrictions,
             "drop `register`");
    if (clang_getCursorTLSKind(c) != CXTLS_None)
      report(keyword(c, "thread_local"), "`thread_local` is not supported in Metal", kCxxRestrictions,
             "use a local variable; every GPU thread already has its own");
  }

  void check_double(const std::vector<Token>& tokens) const {
    for (const Token& t : tokens)
      if (t.text == "double")
        report(t.loc, "`double` is not supported in Metal", kScalarTypes,
               "use float (literals: `1.0f`; an unsuffixed `1.0` is fine, Metal has no double to make it)");
  }

  // A variable at file or namespace scope must be a `constant`.
  void check_program_scope(CXCursor c, const std::vector<Token>& type) const {
    const CXCursorKind parent = clang_getCursorKind(clang_getCursorSemanticParent(c));
    if (parent != CXCursor_TranslationUnit && parent != CXCursor_Namespace) return;
    for (const Token& t : type)
      if (t.text == "constant") return;
    SourceLoc at = type.empty() ? loc(c) : type.front().loc;
    for (const Token& t : type)
      if (is_address_space(t.text)) at = t.loc;
    report(at, "a program-scope variable must be declared in the `constant` address space", kConstantSpace,
           "write `constant` (and initialise it), or declare a `threadgroup` variable inside the kernel");
  }

  void check_declaration(CXCursor c, const Scope& scope) const {
    const CXCursorKind kind = clang_getCursorKind(c);
    if (kind == CXCursor_CXXMethod && clang_CXXMethod_isVirtual(c))
      report(keyword(c, "virtual"), "virtual functions are not supported in Metal", kCxxRestrictions,
             "use templates or a switch on a kind field");
    auto type = type_tokens(ctx_.tu, c);
    if (type.empty()) return;
    if (!is_function_pointer(c)) check_address_spaces(ctx_, type, scope);  // code has no address space
    check_double(type);
    check_versioned_words(type);
    if (kind == CXCursor_VarDecl) {
      check_storage(c);
      check_program_scope(c, type);
    }
  }

  void check_versioned(CXCursor c, const Scope& scope) {
    const CXCursorKind kind = clang_getCursorKind(c);
    if (kind == CXCursor_TypeRef || kind == CXCursor_TemplateRef) check_versioned_type(c);
    if (kind == CXCursor_CallExpr) record_call(c, scope);
    if (kind == CXCursor_VarDecl || kind == CXCursor_ParmDecl || kind == CXCursor_FieldDecl ||
        kind == CXCursor_TypedefDecl || kind == CXCursor_TypeAliasDecl)
      check_function_pointer(c);
  }

  bool before(int major, int minor) const { return ctx_.version < Version{major, minor}; }
  std::string version() const { return ctx_.options.msl_version; }

  // bfloat, bfloat4, packed_bfloat2, bfloat2x2, simdgroup_bfloat8x8 - not a user's `bfloat_block`.
  static bool is_bfloat_type(std::string name) {
    for (const char* prefix : {"packed_", "simdgroup_"})
      if (name.rfind(prefix, 0) == 0) name = name.substr(std::string(prefix).size());
    if (name.rfind("bfloat", 0) != 0) return false;
    return name.find_first_not_of("0123456789x", 6) == std::string::npos;
  }
  static bool is_simdgroup_matrix(const std::string& name) {
    return name == "simdgroup_matrix" || (name.rfind("simdgroup_", 0) == 0 && name.find("8x8") != std::string::npos);
  }

  void check_versioned_name(const std::string& name, const SourceLoc& at) const {
    if (before(3, 1) && is_bfloat_type(name))
      report(at, "`" + name + "` needs MSL 3.1; this file targets MSL " + version(), kScalarTypes,
             "target MSL 3.1 or later, or use half/float");
    if (before(2, 3) && is_simdgroup_matrix(name))
      report(at, "`" + name + "` (simdgroup_matrix) needs MSL 2.3; this file targets MSL " + version(), kSimdMatrix,
             "target MSL 2.3 or later");
  }

  // A type named through `using metal::bfloat;` has no TypeRef in libclang 14: read the words.
  void check_versioned_type(CXCursor ref) const {
    check_versioned_name(conformance::to_string(clang_getCursorSpelling(clang_getCursorReferenced(ref))), loc(ref));
  }
  void check_versioned_words(const std::vector<Token>& tokens) const {
    for (const Token& t : tokens)
      if (t.kind == CXToken_Identifier) check_versioned_name(t.text, t.loc);
  }

  static bool is_function_pointer(CXCursor c) {
    const CXCursorKind kind = clang_getCursorKind(c);
    CXType type = clang_getCursorType(c);
    if (kind == CXCursor_TypedefDecl || kind == CXCursor_TypeAliasDecl) type = clang_getTypedefDeclUnderlyingType(c);
    type = clang_getCanonicalType(type);
    if (type.kind != CXType_Pointer) return false;
    const CXTypeKind pointee = clang_getCanonicalType(clang_getPointeeType(type)).kind;
    return pointee == CXType_FunctionProto || pointee == CXType_FunctionNoProto;
  }

  void check_function_pointer(CXCursor c) const {
    if (before(2, 3) && is_function_pointer(c))
      report(loc(c), "function pointers need MSL 2.3; this file targets MSL " + version(), kVersionedCxx,
             "call the function directly, or select it with a template parameter");
  }

  void record_call(CXCursor call, const Scope& scope) {
    CXCursor callee = clang_getCursorReferenced(call);
    const std::string name = conformance::to_string(clang_getCursorSpelling(callee));
    if (before(2, 0) && (name.rfind("simd_", 0) == 0 || name == "simdgroup_barrier"))
      report(loc(call), "SIMD-group function `" + name + "` needs MSL 2.0; this file targets MSL " + version(),
             kSimdFunctions, "target MSL 2.0 or later");
    if (scope.function_usr.empty() || clang_Cursor_isNull(callee)) return;
    CXCursor templ = clang_getSpecializedCursorTemplate(callee);
    if (!clang_Cursor_isNull(templ)) callee = templ;
    calls_[scope.function_usr].push_back({conformance::to_string(clang_getCursorUSR(callee)), loc(call)});
  }

  bool reaches(const std::string& from, const std::string& to, std::set<std::string>& seen) const {
    if (from == to) return true;
    if (!seen.insert(from).second) return false;
    auto it = calls_.find(from);
    if (it == calls_.end()) return false;
    for (const Call& call : it->second)
      if (reaches(call.callee, to, seen)) return true;
    return false;
  }

  // Recursion (direct or through other functions) is allowed in compute functions from MSL 2.4.
  void check_recursion() const {
    if (!before(2, 4)) return;
    for (const auto& [caller, calls] : calls_)
      for (const Call& call : calls) {
        std::set<std::string> seen;
        if (reaches(call.callee, caller, seen))
          report(call.loc, "recursive calls need MSL 2.4 (compute functions only); this file targets MSL " + version(),
                 kVersionedCxx, "rewrite the recursion as a loop with an explicit stack");
      }
  }
};

}  // namespace

void check_conformance(CXTranslationUnit tu, const ConformanceOptions& options, support::Diagnostics& diags) {
  Reporter reporter(diags);
  const Context ctx{tu, options, parse_version(options.msl_version), reporter};
  const auto incs = inclusions(tu);
  Checker checker(ctx, user_files(incs, file_name(clang_getFile(tu, options.main_file.c_str()))));
  checker.run(incs);
}

}  // namespace mtlgen::msl
