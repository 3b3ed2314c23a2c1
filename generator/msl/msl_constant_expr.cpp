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
  ClangSession session;
  session.parse(name, {"-x", "c++", "-std=c++20", "-w"}, {{name, text.c_str(), static_cast<unsigned long>(text.size())}},
                CXTranslationUnit_None, false);
  std::optional<long long> value;
  if (!session.tu) return value;
  clang_visitChildren(
      clang_getTranslationUnitCursor(session.tu),
      [](CXCursor c, CXCursor, CXClientData data) {
        if (clang_getCursorKind(c) == CXCursor_EnumDecl) return CXChildVisit_Recurse;
        if (clang_getCursorKind(c) == CXCursor_EnumConstantDecl && spelling(c) == "mtl_value" &&
            !clang_isInvalidDeclaration(c))
          *static_cast<std::optional<long long>*>(data) = clang_getEnumConstantDeclValue(c);
        return CXChildVisit_Continue;
      },
      &value);
  if (session.has_errors()) value.reset();
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
