// Overloads on address space. Metal overloads member functions on the address space of `this`
// (`complex_t() thread` beside `complex_t() threadgroup`) and functions on their parameters'
// (`operator+=(thread complex_t<T>&, ...)` beside `(threadgroup complex_t<T>&, ...)`); the parse
// and the simulator erase address spaces, so such overloads become one C++ function declared
// twice. Where two declarations in one scope are the same text once their address-space words
// are dropped, the later one is that same function: clang's redeclaration errors in it are not
// the user's, and the simulator's and CUDA's copies leave it out. Overloads whose bodies differ
// by more than address spaces stay errors: one C++ function cannot be both. Traits specialized
// per address space (`pointer_element<device T*>` beside `<threadgroup T*>`) are twins the same
// way; clang keeps one declaration for them, so they are found from its redefinition errors.
#include <functional>
#include <map>
#include <optional>

#include "msl/msl_internal.h"

namespace mtlgen::msl {

namespace {

bool is_function_like(CXCursorKind k) {
  return k == CXCursor_FunctionDecl || k == CXCursor_CXXMethod || k == CXCursor_Constructor ||
         k == CXCursor_Destructor || k == CXCursor_ConversionFunction || k == CXCursor_FunctionTemplate;
}

bool is_scope(CXCursorKind k) {
  return k == CXCursor_Namespace || k == CXCursor_StructDecl || k == CXCursor_ClassDecl ||
         k == CXCursor_ClassTemplate || k == CXCursor_ClassTemplatePartialSpecialization ||
         k == CXCursor_UnionDecl || k == CXCursor_LinkageSpec;
}

bool is_address_space_word(const std::string& w) {
  return w == "device" || w == "constant" || w == "thread" || w == "threadgroup";
}

struct Declaration {
  SourceRange range;   // from its first decl-specifier word to the end of its extent
  std::string erased;  // its tokens without address-space words
  std::string spelled; // its tokens as written
};

std::optional<Declaration> declaration_of(Context& ctx, CXCursor c) {
  FilePos begin = ctx.begin(c);
  FilePos end = ctx.end(c);
  if (!begin.file || begin.file != end.file || end.offset <= begin.offset) return std::nullopt;
  const UserFile& f = *begin.file;
  Declaration d;
  const size_t first = specifier_start(f, f.token_at(begin.offset));
  d.range = {f.path, f.tokens[first].begin, end.offset};
  for (size_t i = first; i < f.tokens.size() && f.tokens[i].begin < end.offset; ++i) {
    d.spelled += f.tokens[i].text + " ";
    if (!is_address_space_word(f.tokens[i].text)) d.erased += f.tokens[i].text + " ";
  }
  return d;
}

Declaration declaration_of(const UserFile& f, size_t first, size_t last) {
  Declaration d;
  d.range = {f.path, f.tokens[first].begin, f.tokens[last].end};
  for (size_t i = first; i <= last; ++i) {
    d.spelled += f.tokens[i].text + " ";
    if (!is_address_space_word(f.tokens[i].text)) d.erased += f.tokens[i].text + " ";
  }
  return d;
}

// Index of the token closing the bracket opened at `i` (step +1) or closed at `i` (step -1).
std::optional<size_t> matching(const UserFile& f, size_t i, long step) {
  const std::string open = f.tokens[i].text;
  const std::string close = open == "<" ? ">" : open == ">" ? "<" : open == "{" ? "}" : "{";
  int depth = 0;
  for (long j = long(i); j >= 0 && size_t(j) < f.tokens.size(); j += step) {
    const std::string& t = f.tokens[size_t(j)].text;
    if (t == open) ++depth;
    if (t == close) --depth;
    if (t == ">>") depth += open == ">" ? 2 : open == "<" ? -2 : 0;
    if (depth <= 0) return size_t(j);
  }
  return std::nullopt;
}

// `template <...> struct name<...> { ... };` around the name clang's diagnostic points at.
std::optional<Declaration> specialization_at(Context& ctx, CXSourceLocation at) {
  FilePos p = ctx.pos(at);
  if (!p.file) return std::nullopt;
  const UserFile& f = *p.file;
  const size_t name = f.token_at(p.offset);
  if (name < 2 || name + 1 >= f.tokens.size()) return std::nullopt;
  const std::string& key = f.tokens[name - 1].text;
  if (key != "struct" && key != "class") return std::nullopt;
  size_t first = name - 1;
  if (f.tokens[first - 1].text == ">") {
    auto open = matching(f, first - 1, -1);
    if (!open || *open == 0 || f.tokens[*open - 1].text != "template") return std::nullopt;
    first = *open - 1;
  }
  size_t body = name + 1;
  if (f.tokens[body].text == "<") {
    auto close = matching(f, body, 1);
    if (!close) return std::nullopt;
    body = *close + 1;
  }
  if (body >= f.tokens.size() || f.tokens[body].text != "{") return std::nullopt;
  auto last = matching(f, body, 1);
  if (!last) return std::nullopt;
  if (*last + 1 < f.tokens.size() && f.tokens[*last + 1].text == ";") ++*last;
  return declaration_of(f, first, *last);
}

// Where the note "previous definition is here" among `d`'s points.
std::optional<CXSourceLocation> previous_definition(CXDiagnostic d) {
  CXDiagnosticSet notes = clang_getChildDiagnostics(d);
  std::optional<CXSourceLocation> out;
  for (unsigned i = 0, n = notes ? clang_getNumDiagnosticsInSet(notes) : 0; i < n && !out; ++i) {
    CXDiagnostic note = clang_getDiagnosticInSet(notes, i);
    if (str(clang_getDiagnosticSpelling(note)).rfind("previous definition", 0) == 0)
      out = clang_getDiagnosticLocation(note);
    clang_disposeDiagnostic(note);
  }
  return out;
}

// Each "redefinition of" error whose declaration equals its previous definition's but for
// address-space words.
void collect_specializations(Context& ctx, std::vector<SourceRange>& twins) {
  for (unsigned i = 0, n = clang_getNumDiagnostics(ctx.tu()); i < n; ++i) {
    CXDiagnostic d = clang_getDiagnostic(ctx.tu(), i);
    auto previous = previous_definition(d);
    if (previous && str(clang_getDiagnosticSpelling(d)).rfind("redefinition of", 0) == 0) {
      auto later = specialization_at(ctx, clang_getDiagnosticLocation(d));
      auto earlier = specialization_at(ctx, *previous);
      if (later && earlier && later->erased == earlier->erased && later->spelled != earlier->spelled)
        twins.push_back(later->range);
    }
    clang_disposeDiagnostic(d);
  }
}

void collect(Context& ctx, CXCursor scope, std::vector<SourceRange>& twins) {
  std::map<std::string, std::string> first_spelling;  // erased text -> the first one's spelling
  std::function<CXChildVisitResult(CXCursor)> visit = [&](CXCursor c) {
    const CXCursorKind k = clang_getCursorKind(c);
    if (!ctx.in_user_file(c)) return CXChildVisit_Continue;
    if (is_scope(k)) {
      collect(ctx, c, twins);
    } else if (is_function_like(k)) {
      if (auto d = declaration_of(ctx, c)) {
        auto [it, first] = first_spelling.emplace(d->erased, d->spelled);
        if (!first && it->second != d->spelled) twins.push_back(d->range);
      }
    }
    return CXChildVisit_Continue;
  };
  clang_visitChildren(
      scope,
      [](CXCursor c, CXCursor, CXClientData data) {
        return (*static_cast<std::function<CXChildVisitResult(CXCursor)>*>(data))(c);
      },
      &visit);
}

}  // namespace

std::vector<SourceRange> address_space_twins(Context& ctx) {
  std::vector<SourceRange> twins;
  collect(ctx, clang_getTranslationUnitCursor(ctx.tu()), twins);
  collect_specializations(ctx, twins);
  return twins;
}

}  // namespace mtlgen::msl
