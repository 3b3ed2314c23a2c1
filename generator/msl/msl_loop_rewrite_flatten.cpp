// The loop rewrite's flattening: the kernel's body, helpers inlined (HelperInliner) and uniform
// loops and branches opened (UniformControl), as a list of top-level items split into regions at
// its sync points (FlatBody).
#include <fmt/format.h>

#include "msl/msl_loop_rewrite.h"

namespace mtlgen::msl::loop_form {

void Flattener::flatten(CXCursor body, const Scope& scope, const Target* result, bool helper) {
  flatten(children(body), scope, result, helper);
}

void Flattener::flatten(const std::vector<CXCursor>& stmts, const Scope& scope, const Target* result, bool helper) {
  for (size_t i = 0; i < stmts.size(); ++i) {
    CXCursor s = stmts[i];
    const bool last = i + 1 == stmts.size();
    if (clang_getCursorKind(s) == CXCursor_ReturnStmt && helper) {
      if (!last) throw Refusal{"a helper returns before its end", src_.line_of(s)};
      helper_return(s, scope, *result);
      continue;
    }
    if (!sync_.contains_sync(s)) {
      if (contains(s, CXCursor_ReturnStmt)) {
        if (helper) throw Refusal{"a helper returns before its end", src_.line_of(s)};
        if (!return_line_) return_line_ = src_.line_of(s);
      }
      code(s, scope);
      continue;
    }
    if (return_line_)
      throw Refusal{fmt::format("a thread may return (line {}) before the barrier or simd function at line {}",
                                return_line_, src_.line_of(s)), src_.line_of(s)};
    if (control_.statement(s, scope)) continue;
    if (!extract_sync_calls(s, scope)) sync_statement(s, scope);
  }
}

void Flattener::code(CXCursor s, const Scope& scope) {
  Item item = make_item(Item::code, src_.line_of(s), src_.render(s, scope, true));
  item.region = body_.region;
  if (clang_getCursorKind(s) == CXCursor_DeclStmt) declaration(s, scope, item);
  body_.note_uses(item.text, body_.region);
  body_.items.push_back(std::move(item));
}

// A top-level declaration: its variable may be needed in later regions.
void Flattener::declaration(CXCursor s, const Scope& scope, Item& item) {
  std::vector<CXCursor> decls = children(s);
  bool constant = has_word(item.text, "constexpr");
  if (has_word(item.text, "static")) throw Refusal{"a static local", src_.line_of(s)};
  if (decls.size() != 1 || clang_getCursorKind(decls[0]) != CXCursor_VarDecl) {
    for (CXCursor v : decls) body_.add_var(scope.rename(spelling(v)), "", constant, src_.line_of(s));
    body_.multi.push_back(int(body_.vars.size()) - 1);
    return;
  }
  CXCursor v = decls[0];
  std::string type = rename_words(spelling(clang_getCursorType(v)), scope);
  item.var = body_.add_var(scope.rename(spelling(v)), type, constant, src_.line_of(s));
  auto [b, e] = src_.range_of(s, true);
  FilePos name = src_.ctx().pos(v);
  std::string rendered_prefix = src_.render(b, name.offset, scope);
  item.name_at = unsigned(rendered_prefix.size());
  item.name_end = item.name_at + unsigned(body_.vars[item.var].name.size());
  item.has_init = has_initializer(item.text.substr(item.name_end));
  body_.vars[item.var].initialised = item.has_init;
  if (constant) body_.hoisted.push_back(src_.line_directive(item.line) + item.text + "\n");
  (void)e;
}

// What follows a declared name: `[N][M] = {...};`, ` = x;`, `{x};`, `(x);` or just `[N];`.
bool Flattener::has_initializer(const std::string& after_name) {
  int depth = 0;
  for (char ch : after_name) {
    if (ch == '[') ++depth;
    if (ch == ']') --depth;
    if (depth == 0 && (ch == '=' || ch == '{' || ch == '(')) return true;
    if (depth == 0 && ch == ';') return false;
  }
  return false;
}

// Sync calls that are operands of a statement's expression (`1.0f / tg_sum<TG>(...)`): each is
// evaluated first into a temporary `mtlsim_s<N>`, then the statement reads the temporaries. Only
// where every such call is evaluated unconditionally (no `?:`, `&&`, `||` in the statement) and
// the statement is a declaration or an expression; false where it is not of that kind.
bool Flattener::extract_sync_calls(CXCursor s, const Scope& scope) {
  CXCursorKind kind = clang_getCursorKind(s);
  if (kind != CXCursor_DeclStmt && !clang_isExpression(kind)) return false;
  if (kind == CXCursor_DeclStmt && children(s).size() != 1) return false;
  CXCursor direct = strip(kind == CXCursor_DeclStmt ? children(children(s)[0]).back() : s);
  auto is_sync = [&](CXCursor c) { return clang_getCursorKind(c) == CXCursor_CallExpr && sync_.is_sync_call(callee_name(c)); };
  if (is_sync(direct)) return false;  // the plain form
  if (kind == CXCursor_BinaryOperator && src_.is_assignment(children(s)[0]) && is_sync(strip(children(s)[1]))) return false;
  std::vector<CXCursor> calls;
  visit(s, [&](CXCursor x) {
    if (clang_getCursorKind(x) == CXCursor_CallExpr && sync_.is_sync_call(callee_name(x))) {
      calls.push_back(x);
      return CXChildVisit_Continue;
    }
    return CXChildVisit_Recurse;
  });
  auto [b, e] = src_.range_of(s, true);
  std::string text = src_.original().substr(b, e - b);
  if (calls.empty() || text.find('?') != std::string::npos || text.find("&&") != std::string::npos ||
      text.find("||") != std::string::npos)
    return false;
  std::vector<Edit> replaced;
  for (CXCursor call : calls) {
    Target target;
    target.kind = Target::declare;
    target.text = "auto ";
    target.var_name = fmt::format("mtlsim_s{}", ++temporaries_);
    target.var_type = kept_type(call, scope);
    sync_call(call, target, scope, src_.line_of(call));
    auto [cb, ce] = src_.range_of(call, false);
    replaced.push_back({cb, ce, target.var_name});
  }
  Item item = make_item(Item::code, src_.line_of(s), src_.render(b, e, scope, replaced));
  item.region = body_.region;
  if (kind == CXCursor_DeclStmt) declaration_of_extracted(s, scope, item, replaced);
  body_.note_uses(item.text, body_.region);
  body_.items.push_back(std::move(item));
  return true;
}

// The type a temporary is kept in when a later region reads it: the call's, where clang knows it
// (`auto` otherwise, which cannot be kept).
std::string Flattener::kept_type(CXCursor call, const Scope& scope) const {
  const std::string type = spelling(clang_getCursorType(call));
  if (type.empty() || has_word(type, "dependent") || type.find("type-parameter") != std::string::npos) return "auto";
  return rename_words(type, scope);
}

// declaration() for a statement whose sync calls were replaced by temporaries.
void Flattener::declaration_of_extracted(CXCursor s, const Scope& scope, Item& item, const std::vector<Edit>& replaced) {
  CXCursor v = children(s)[0];
  if (has_word(item.text, "constexpr") || has_word(item.text, "static"))
    throw Refusal{"a constexpr or static declaration initialised by a simd function", src_.line_of(s)};
  item.var = body_.add_var(scope.rename(spelling(v)), rename_words(spelling(clang_getCursorType(v)), scope), false, src_.line_of(s));
  auto [b, e] = src_.range_of(s, true);
  item.name_at = unsigned(src_.render(b, src_.ctx().pos(v).offset, scope, replaced).size());
  item.name_end = item.name_at + unsigned(body_.vars[item.var].name.size());
  item.has_init = true;
  (void)e;
}

// `f(...);`, `x = f(...);` or `T x = f(...);` where f is a sync point.
void Flattener::sync_statement(CXCursor s, const Scope& scope) {
  CXCursor call = strip(s);
  Target target;
  CXCursorKind kind = clang_getCursorKind(call);
  if (kind == CXCursor_DeclStmt) {
    std::vector<CXCursor> decls = children(call);
    if (decls.size() != 1 || clang_getCursorKind(decls[0]) != CXCursor_VarDecl)
      throw Refusal{"a barrier or simd function inside a declaration of several variables", src_.line_of(s)};
    CXCursor v = decls[0];
    std::vector<CXCursor> kids = children(v);
    if (kids.empty()) throw Refusal{"unexpected declaration", src_.line_of(s)};
    call = strip(kids.back());
    auto [b, e] = src_.range_of(s, true);
    target.kind = Target::declare;
    target.text = src_.render(b, src_.ctx().pos(v).offset, scope);
    if (has_word(target.text, "constexpr") || has_word(target.text, "static"))
      throw Refusal{"a constexpr or static declaration initialised by a simd function", src_.line_of(s)};
    target.var_name = scope.rename(spelling(v));
    target.var_type = rename_words(spelling(clang_getCursorType(v)), scope);
    (void)e;
  } else if (kind == CXCursor_BinaryOperator) {
    std::vector<CXCursor> kids = children(call);
    if (kids.size() != 2 || !src_.is_assignment(kids[0])) throw Refusal{"a barrier or simd function inside an expression", src_.line_of(s)};
    if (sync_.contains_sync(kids[0])) throw Refusal{"a barrier or simd function inside an expression", src_.line_of(s)};
    target.kind = Target::assign;
    target.text = src_.render(kids[0], scope);
    call = strip(kids[1]);
  }
  if (clang_getCursorKind(call) != CXCursor_CallExpr)
    throw Refusal{"a barrier or simd function inside a statement (a branch, a loop or an expression)", src_.line_of(s)};
  sync_call(call, target, scope, src_.line_of(s));
}

// Whether `call` resolves to a function outside the user's files (the shim's builtin), not to an
// overload a user file defines (MLX's bf16_math.h `simd_sum(bfloat)`); unresolved (dependent): no.
bool Flattener::calls_the_builtin(CXCursor call) const {
  CXCursor callee = clang_getCursorReferenced(call);
  return !clang_Cursor_isNull(callee) && !src_.ctx().in_user_file(callee);
}

void Flattener::sync_call(CXCursor call, Target target, const Scope& scope, int line) {
  const std::string name = callee_name(call);
  const int n = clang_Cursor_getNumArguments(call);
  for (int i = 0; i < n; ++i)
    if (sync_.contains_sync(clang_Cursor_getArgument(call, unsigned(i))))
      throw Refusal{fmt::format("a barrier or simd function in an argument of `{}`", name), line};
  if (src_.defined_here(name)) return inliner_.inline_helper(call, name, target, scope, line);
  if (src_.defined_elsewhere(name) && !(is_sync_builtin(name) && calls_the_builtin(call)))
    throw Refusal{fmt::format("`{}`, which reaches a barrier or simd function, is defined in another file than the kernel "
                              "(a loop form inlines only helpers of the kernel's own file)", name), line};
  if (!is_sync_builtin(name)) throw Refusal{fmt::format("`{}` is not a barrier or simd function", name), line};
  Item item = make_item(Item::sync, line, src_.render(call, scope));
  item.region = body_.region;
  item.barrier = name == "threadgroup_barrier";
  if (item.barrier && control_.in_simdgroup_block())
    throw Refusal{"a threadgroup barrier inside a loop or branch that is the same only within each simdgroup", line};
  body_.note_uses(item.text, body_.region);
  ++body_.region;
  body_.note_uses(item.text, body_.region);  // its result is read in the next region: decltype names them
  if (target.kind == Target::assign) body_.note_uses(target.text, body_.region);
  if (target.kind == Target::declare) target.var = body_.add_var(target.var_name, target.var_type, false, line);
  item.target = target;
  body_.items.push_back(std::move(item));
}

// The returned expression of an inlined helper goes where its call's result went.
void Flattener::helper_return(CXCursor ret, const Scope& scope, const Target& result) {
  std::vector<CXCursor> kids = children(ret);
  if (kids.empty()) return;
  CXCursor e = strip(kids[0]);
  if (sync_.contains_sync(e)) {
    if (clang_getCursorKind(e) != CXCursor_CallExpr) throw Refusal{"a helper returns an expression with a simd function", src_.line_of(ret)};
    return sync_call(e, result, scope, src_.line_of(ret));
  }
  Target target = result;
  if (target.kind == Target::declare) target.var = body_.add_var(target.var_name, target.var_type, false, src_.line_of(ret));
  Item item = make_item(Item::result, src_.line_of(ret), src_.render(kids[0], scope));
  item.region = body_.region;
  body_.note_uses(item.text, body_.region);
  if (target.kind == Target::assign) body_.note_uses(target.text, body_.region);
  item.target = target;
  body_.items.push_back(std::move(item));
}

}  // namespace mtlgen::msl::loop_form
