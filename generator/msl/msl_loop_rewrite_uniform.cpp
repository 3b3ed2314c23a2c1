// What every thread of a threadgroup, or of a simdgroup, sees alike (issue 29 item 1). A uniform
// loop's or branch's header may read literals, template parameters, constexpr and file-scope
// constants, enumerators and the counters of enclosing uniform loops, and its body may not change a
// counter nor leave it. A simdgroup block's header (a loop or branch around simd functions only,
// run once per simdgroup with one lane's values) may also read the builtins that are the same in a
// simdgroup (its index, the threadgroup's position, the grid's and threadgroup's sizes), the
// kernel's `constant` parameters (no thread writes them), `const` scalar locals initialised from
// such values, and min, max, clamp and abs of them.
#include <set>

#include "msl/msl_loop_rewrite.h"

namespace mtlgen::msl::loop_form {

void Uniformity::push_counters(const std::vector<CXCursor>& counters) {
  counters_.insert(counters_.end(), counters.begin(), counters.end());
}

// Whether the expression reads only what every thread of the threadgroup (or simdgroup) sees alike.
bool Uniformity::uniform(CXCursor e, Scope_ across) const {
  bool ok = true;
  auto check = [&](CXCursor x) {
    switch (clang_getCursorKind(x)) {
      case CXCursor_DeclRefExpr: ok = ok && uniform_reference(x, across); break;
      case CXCursor_CallExpr: ok = ok && across != threadgroup && pure_call(x); break;  // `min(begin + n, end)`
      case CXCursor_OverloadedDeclRef: ok = false; break;  // a dependent call
      case CXCursor_MemberRefExpr: ok = ok && across != threadgroup; break;  // `params.n`, `tgid.x`: as uniform as the base
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

bool Uniformity::uniform_reference(CXCursor ref, Scope_ across) const {
  const CXCursor d = clang_getCursorReferenced(ref);
  switch (clang_getCursorKind(d)) {
    case CXCursor_NonTypeTemplateParameter:
    case CXCursor_EnumConstantDecl: return true;
    case CXCursor_ParmDecl: return across != threadgroup && uniform_parameter(d, across);
    case CXCursor_FunctionDecl:
    case CXCursor_FunctionTemplate: return across != threadgroup && pure_function(d);
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
  return across == simdgroup && uniform_local(d);
}

// The Metal library's min, max, clamp and abs: their result is as uniform as their arguments. A
// cast written as a call (`uint(x)`) has no callee name and is a cast.
bool Uniformity::pure_function(CXCursor fn) const {
  static const std::set<std::string> pure = {"min", "max", "clamp", "abs"};
  return pure.count(spelling(fn)) && !src_.ctx().in_user_file(fn);
}

bool Uniformity::pure_call(CXCursor call) const {
  const CXCursor callee = clang_getCursorReferenced(call);
  return !clang_Cursor_isNull(callee) && pure_function(callee);
}

// A parameter of the kernel that the body never assigns and that is the same in the threadgroup: a
// `constant` buffer or argument struct, or a builtin of the threadgroup or grid (a threadgroup-wide
// header reads the loop form's parameters, which hold thread 0's builtins); in a simdgroup, also
// the simdgroup's index, and a helper's parameter (a local bound before the block) whose argument is.
bool Uniformity::uniform_parameter(CXCursor param, Scope_ across) const {
  const std::string name = spelling(param);
  const CXCursor parent = clang_getCursorSemanticParent(param);
  const CXCursor body = Source::body_of(parent);
  if (clang_Cursor_isNull(body) || assigns(body, name)) return false;
  if (!clang_equalCursors(parent, kernel_)) {  // an inlined helper's: a local bound to its argument
    for (auto a = arguments_.rbegin(); a != arguments_.rend(); ++a)
      if (clang_equalCursors(a->param, param)) return across == simdgroup && !a->in_block && uniform(a->arg, across);
    return false;
  }
  for (const KernelParam& p : entry_.params) {
    if (p.name != name) continue;
    if (p.kind != ParamKind::builtin) return p.address_space == AddressSpace::constant;
    if (!p.builtin) return p.builtin_attribute == "threads_per_simdgroup" || p.builtin_attribute == "thread_execution_width";
    switch (*p.builtin) {
      case ir::Builtin::threadgroup_position_in_grid:
      case ir::Builtin::threads_per_grid:
      case ir::Builtin::threads_per_threadgroup:
      case ir::Builtin::threadgroups_per_grid:
      case ir::Builtin::simdgroups_per_threadgroup:
      case ir::Builtin::threads_per_simdgroup: return true;
      case ir::Builtin::simdgroup_index_in_threadgroup: return across == simdgroup;
      default: return false;
    }
  }
  return false;
}

// A `const` scalar or vector local, declared before the simdgroup block, whose initializer is
// uniform per simdgroup (`const uint kv_len = params.kv_len;`).
bool Uniformity::uniform_local(CXCursor var) const {
  const CXType type = clang_getCursorType(var);
  const CXTypeKind kind = clang_getCanonicalType(type).kind;
  const bool scalar = (kind >= CXType_FirstBuiltin && kind <= CXType_LastBuiltin && kind != CXType_Void) ||
                      kind == CXType_Vector || kind == CXType_ExtVector;
  if (!scalar || !clang_isConstQualifiedType(type)) return false;
  const FilePos at = src_.ctx().pos(var);
  if (at.file == &src_.file() && at.offset >= block_.first && at.offset < block_.second) return false;
  std::vector<CXCursor> kids = children(var);
  if (kids.empty() || !clang_isExpression(clang_getCursorKind(kids.back()))) return false;
  return uniform(kids.back(), simdgroup);
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

// Whether a `break`, `continue`, `return` (where `returns`) or `goto` in `c` leaves the statement
// being flattened (`in_loop` / `in_switch`: inside a loop or switch of its own, which a break stays in).
bool Uniformity::jumps_out(CXCursor c, bool in_loop, bool in_switch, bool returns) {
  bool out = false;
  visit(c, [&](CXCursor x) {
    switch (clang_getCursorKind(x)) {
      case CXCursor_ReturnStmt: out = returns; break;
      case CXCursor_GotoStmt: out = true; break;
      case CXCursor_BreakStmt: out = !in_loop && !in_switch; break;
      case CXCursor_ContinueStmt: out = !in_loop; break;
      case CXCursor_ForStmt:
      case CXCursor_WhileStmt:
      case CXCursor_DoStmt: out = jumps_out(x, true, in_switch, returns); return out ? CXChildVisit_Break : CXChildVisit_Continue;
      case CXCursor_SwitchStmt: out = jumps_out(x, in_loop, true, returns); return out ? CXChildVisit_Break : CXChildVisit_Continue;
      default: break;
    }
    return out ? CXChildVisit_Break : CXChildVisit_Recurse;
  });
  return out;
}

}  // namespace mtlgen::msl::loop_form
