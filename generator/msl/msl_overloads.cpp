// Overloads on address space. Metal overloads member functions on the address space of `this`
// (`complex_t() thread` beside `complex_t() threadgroup`) and functions on their parameters'
// (`operator+=(thread complex_t<T>&, ...)` beside `(threadgroup complex_t<T>&, ...)`); the parse
// and the simulator erase address spaces, so such overloads become one C++ function declared
// twice. Where two declarations in one scope are the same text once their address-space words
// are dropped, the later one is that same function: clang's redeclaration errors in it are not
// the user's, and the simulator's and CUDA's copies leave it out. Overloads whose bodies differ
// by more than address spaces stay errors: one C++ function cannot be both.
#include <functional>
#include <map>

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
  return twins;
}

}  // namespace mtlgen::msl
