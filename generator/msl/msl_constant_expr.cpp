// Integer constant expressions that the AST does not hold: the arguments of attributes clang
// drops (`[[buffer(BASE + 1)]]`). Clang evaluates each in a small translation unit of its own
// that holds the user files' macro definitions and the expression as an enumerator.
#include <fmt/format.h>

#include "msl/msl_internal.h"

namespace mtlgen::msl {

namespace {

// Every `#define` of the user files, as written (continuation lines included).
std::string macro_definitions(Context& ctx) {
  std::string out;
  for (const auto& [path, f] : ctx.files())
    for (size_t i = 1; i < f.tokens.size(); ++i) {
      if (f.tokens[i].text != "define" || f.tokens[i - 1].text != "#") continue;
      const size_t end = define_end(f, i);
      const unsigned stop = end < f.tokens.size() ? f.tokens[end - 1].end : static_cast<unsigned>(f.text.size());
      out += "#" + std::string(f.slice(f.tokens[i].begin, stop)) + "\n";
    }
  return out;
}

std::optional<long long> evaluate_with_clang(const std::string& text) {
  const char* name = "/.mtlgen-constant-expression.cpp";
  CXUnsavedFile file{name, text.c_str(), static_cast<unsigned long>(text.size())};
  const char* args[] = {"-x", "c++", "-std=c++20", "-w"};
  CXIndex index = clang_createIndex(0, 0);
  CXTranslationUnit tu = clang_parseTranslationUnit(index, name, args, 4, &file, 1, CXTranslationUnit_None);
  std::optional<long long> value;
  if (tu) {
    clang_visitChildren(
        clang_getTranslationUnitCursor(tu),
        [](CXCursor c, CXCursor, CXClientData data) {
          if (clang_getCursorKind(c) == CXCursor_EnumDecl) return CXChildVisit_Recurse;
          if (clang_getCursorKind(c) == CXCursor_EnumConstantDecl && spelling(c) == "mtl_value" &&
              !clang_isInvalidDeclaration(c))
            *static_cast<std::optional<long long>*>(data) = clang_getEnumConstantDeclValue(c);
          return CXChildVisit_Continue;
        },
        &value);
    bool errors = false;
    for (unsigned i = 0, n = clang_getNumDiagnostics(tu); i < n; ++i) {
      CXDiagnostic d = clang_getDiagnostic(tu, i);
      errors = errors || clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error;
      clang_disposeDiagnostic(d);
    }
    if (errors) value.reset();
    clang_disposeTranslationUnit(tu);
  }
  clang_disposeIndex(index);
  return value;
}

}  // namespace

std::optional<long long> evaluate_integer(Context& ctx, const std::string& expression) {
  auto known = ctx.evaluated.find(expression);
  if (known != ctx.evaluated.end()) return known->second;
  std::string text = macro_definitions(ctx) + fmt::format("enum : long long {{ mtl_value = ({}) }};\n", expression);
  return ctx.evaluated[expression] = evaluate_with_clang(text);
}

}  // namespace mtlgen::msl
