// What every thread of a threadgroup sees alike (issue 29 item 1): a uniform loop's or branch's
// header may read literals, template parameters, constexpr and file-scope constants, enumerators
// and the counters of enclosing uniform loops, and its body may not change a counter nor leave it.
#include <set>

#include "msl/msl_loop_rewrite.h"

namespace mtlgen::msl::loop_form {

void Uniformity::push_counters(const std::vector<CXCursor>& counters) {
  counters_.insert(counters_.end(), counters.begin(), counters.end());
}

// Whether the expression reads only what every thread of the threadgroup sees alike.
bool Uniformity::uniform(CXCursor e) const {
  bool ok = true;
  auto check = [&](CXCursor x) {
    switch (clang_getCursorKind(x)) {
      case CXCursor_DeclRefExpr: ok = ok && uniform_reference(x); break;
      case CXCursor_CallExpr:            // a function's result, or a dependent expression
      case CXCursor_OverloadedDeclRef:
      case CXCursor_MemberRefExpr: ok = false; break;
      default: break;
    }
  };
  check(e);
  visit(e, [&](CXCursor x) {
    check(x);
    return ok ? CXChildVisit_Recurse : CXChildVisit_Break;
  });
  return ok;
}

bool Uniformity::uniform_reference(CXCursor ref) const {
  const CXCursor d = clang_getCursorReferenced(ref);
  switch (clang_getCursorKind(d)) {
    case CXCursor_NonTypeTemplateParameter:
    case CXCursor_EnumConstantDecl: return true;
    case CXCursor_VarDecl: break;
    default: return false;
  }
  for (CXCursor c : counters_)
    if (clang_equalCursors(c, d)) return true;
  const CXCursorKind parent = clang_getCursorKind(clang_getCursorSemanticParent(d));
  if (parent == CXCursor_TranslationUnit || parent == CXCursor_Namespace)  // a file-scope constant or function constant
    return clang_isConstQualifiedType(clang_getCursorType(d));
  FilePos at = src_.ctx().begin(d);
  if (!at.file) return false;
  for (size_t i = at.file->token_at(at.offset); i < at.file->tokens.size() && at.file->tokens[i].begin < src_.ctx().pos(d).offset; ++i)
    if (at.file->tokens[i].text == "constexpr") return true;
  return false;
}

// Whether `body` assigns `name`, increments it or takes its address.
bool Uniformity::assigns(CXCursor body, const std::string& name) const {
  static const std::set<std::string> writes = {"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^=", "++", "--"};
  const UserFile& f = src_.file();
  auto [b, e] = src_.range_of(body, false);
  for (size_t i = f.token_at(b); i < f.tokens.size() && f.tokens[i].end <= e; ++i) {
    if (f.tokens[i].text != name) continue;
    const std::string before = i > 0 ? f.tokens[i - 1].text : "";
    const std::string after = i + 1 < f.tokens.size() ? f.tokens[i + 1].text : "";
    if (before == "." || before == "->" || before == "::") continue;
    if (writes.count(after) || before == "++" || before == "--" || before == "&") return true;
  }
  return false;
}

// Whether a `break`, `continue`, `return` or `goto` in `c` leaves the statement being flattened
// (`in_loop` / `in_switch`: inside a loop or switch of its own, which a break stays in).
bool Uniformity::jumps_out(CXCursor c, bool in_loop, bool in_switch) {
  bool out = false;
  visit(c, [&](CXCursor x) {
    switch (clang_getCursorKind(x)) {
      case CXCursor_ReturnStmt:
      case CXCursor_GotoStmt: out = true; break;
      case CXCursor_BreakStmt: out = !in_loop && !in_switch; break;
      case CXCursor_ContinueStmt: out = !in_loop; break;
      case CXCursor_ForStmt:
      case CXCursor_WhileStmt:
      case CXCursor_DoStmt: out = jumps_out(x, true, in_switch); return out ? CXChildVisit_Break : CXChildVisit_Continue;
      case CXCursor_SwitchStmt: out = jumps_out(x, in_loop, true); return out ? CXChildVisit_Break : CXChildVisit_Continue;
      default: break;
    }
    return out ? CXChildVisit_Break : CXChildVisit_Recurse;
  });
  return out;
}

}  // namespace mtlgen::msl::loop_form
