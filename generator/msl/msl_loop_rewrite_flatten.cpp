// The loop rewrite's flattening: the kernel's body, helpers inlined (HelperInliner) and uniform
// loops and branches opened (UniformControl), as a list of top-level items split into regions at
// its sync points (FlatBody).
#include <fmt/format.h>

#include <regex>
#include <set>

#include "msl/msl_loop_rewrite.h"

namespace mtlgen::msl::loop_form {

void Flattener::flatten(CXCursor body, const Scope& scope, const Target* result, bool helper) {
  flatten(children(body), scope, result, helper);
}

// `if (cond) return;` before sync points, in a helper that returns nothing or in the statements
// that run to the kernel's end (`tail`), becomes `if (!(cond)) { rest }` where `cond` is uniform
// (UniformControl::guard); a helper's on another condition is refused, a kernel's is a `return`
// before a sync point (below).
void Flattener::flatten(const std::vector<CXCursor>& stmts, const Scope& scope, const Target* result, bool helper) {
  const bool tail = !helper && kernel_tail_;
  kernel_tail_ = false;
  for (size_t i = 0; i < stmts.size(); ++i) {
    CXCursor s = stmts[i];
    const bool last = i + 1 == stmts.size();
    const bool helper_guard = helper && result && result->kind == Target::none;
    if ((helper_guard || (tail && !return_line_)) && !last && UniformControl::early_return(s)) {
      const std::vector<CXCursor> rest(stmts.begin() + long(i) + 1, stmts.end());
      bool syncs = false, returns = false;
      for (CXCursor r : rest) {
        syncs = syncs || sync_.contains_sync(r);
        returns = returns || contains(r, CXCursor_ReturnStmt);
      }
      if (syncs && !returns) {
        kernel_tail_ = !helper;
        if (control_.guard(s, rest, scope)) return;
        kernel_tail_ = false;
        if (helper) throw Refusal{"a helper returns before its end, where its threads may differ", src_.line_of(s)};
      }
    }
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

// A parameter the body assigns (MLX's `x += gid * size_t(axis_size)`), or passes to a helper that
// may take it by reference (MLX's adjust_matrix_offsets), is each thread's own, where the loop
// form's parameters are the threadgroup's: the regions name a copy declared first (`mtlsim_p_x`,
// kept per thread where a later region reads it). Such a builtin (the regions bind their own) or
// reference is refused.
Scope Flattener::parameter_copies(CXCursor fn, const EntryPoint& entry) {
  Scope scope;
  const CXCursor body = Source::body_of(fn);
  const Uniformity uniformity(src_, fn, entry);
  const UserFile& f = src_.file();
  const std::set<std::string> by_reference = passed_by_reference(body);
  for (CXCursor param : children(fn)) {
    if (clang_getCursorKind(param) != CXCursor_ParmDecl) continue;
    const std::string name = spelling(param);
    if (name.empty() || (!uniformity.assigns(body, name) && !by_reference.count(name))) continue;
    const int line = src_.line_of(param);
    for (const KernelParam& p : entry.params)
      if (p.name == name && (p.kind == ParamKind::builtin || p.is_reference))
        throw Refusal{fmt::format("the body assigns the parameter `{}`, a builtin or reference", name), line};
    const std::string copy = "mtlsim_p_" + name;
    scope.renames[name] = copy;
    const size_t first = specifier_start(f, f.token_at(src_.ctx().begin(param).offset));
    const std::string type = src_.render(f.tokens[first].begin, src_.ctx().pos(param).offset, Scope{});
    Item item = make_item(Item::code, line, fmt::format("{}{} = {};", type, copy, name));
    item.region = body_.region;
    item.var = body_.add_var(copy, spelling(clang_getCursorType(param)), false, line);
    item.name_at = unsigned(type.size());
    item.name_end = item.name_at + unsigned(copy.size());
    body_.items.push_back(std::move(item));
  }
  return scope;
}

// The names passed whole (`f(x)`) to a function of the user's files that has a non-const
// reference parameter there (in any of its declarations of that name: a template's is not
// resolved).
std::set<std::string> Flattener::passed_by_reference(CXCursor body) const {
  std::set<std::string> out;
  const auto reference_at = [&](const std::string& callee, unsigned i, int arguments) {
    bool any = false;
    for (bool here : {true, false}) {
      if (here ? !src_.defined_here(callee) : !src_.defined_elsewhere(callee)) continue;
      for (CXCursor def : here ? src_.definitions(callee) : src_.definitions_elsewhere(callee)) {
        std::vector<CXCursor> params;
        for (CXCursor p : children(def))
          if (clang_getCursorKind(p) == CXCursor_ParmDecl) params.push_back(p);
        if (int(params.size()) != arguments) continue;  // another overload
        const CXType t = clang_getCursorType(params[i]);
        any = any || (t.kind == CXType_LValueReference && !clang_isConstQualifiedType(clang_getPointeeType(t)));
      }
    }
    return any;
  };
  visit(body, [&](CXCursor x) {
    if (clang_getCursorKind(x) != CXCursor_CallExpr) return CXChildVisit_Recurse;
    const std::string callee = callee_name(x);
    const int n = clang_Cursor_getNumArguments(x);
    for (int i = 0; i < n; ++i) {
      const CXCursor arg = strip(clang_Cursor_getArgument(x, unsigned(i)));
      if (clang_getCursorKind(arg) == CXCursor_DeclRefExpr && reference_at(callee, unsigned(i), n)) out.insert(spelling(arg));
    }
    return CXChildVisit_Recurse;
  });
  return out;
}

void Flattener::code(CXCursor s, const Scope& scope) {
  if (clang_getCursorKind(s) == CXCursor_DeclStmt && (threadgroup_declaration(s, scope) || type_declaration(s, scope))) return;
  Item item = make_item(Item::code, src_.line_of(s), src_.render(s, scope, true));
  item.region = body_.region;
  if (clang_getCursorKind(s) == CXCursor_DeclStmt) declaration(s, scope, item);
  body_.note_uses(item.text, body_.region);
  body_.items.push_back(std::move(item));
}

// `threadgroup float sums[32];` at the top level of a body (or of an inlined helper's, or of a
// uniform loop's or branch's): one variable per threadgroup, whatever scope declares it, so it is
// declared once at the top of the loop form as the fibers' rewrite declares it (msl_rewrite.cpp,
// mtlsim/msl_threadgroup.h: a reference to the threadgroup's storage for the site, poisoned as the
// threadgroup's first thread reaches it) and every region names that reference. The declaration
// runs as a lane (the runtime asks for one). One nested in a statement stays there: each thread of
// the region gets the same storage, as a fiber would.
bool Flattener::threadgroup_declaration(CXCursor s, const Scope& scope) {
  std::vector<CXCursor> decls = children(s);
  size_t sites = 0;
  for (CXCursor v : decls) sites += clang_getCursorKind(v) == CXCursor_VarDecl && src_.threadgroup_site(v) != nullptr;
  const int line = src_.line_of(s);
  const std::string lane = "::mtlsim::detail::tls_lane = &mtlsim_run.lanes[0];\n";
  if (sites == 0) {  // a generated kernel's simulator copy declares it so already (the spec's body)
    const std::string text = src_.render(s, scope, true);
    if (decls.size() != 1 || clang_getCursorKind(decls[0]) != CXCursor_VarDecl ||
        text.find("::mtlsim::threadgroup_local<") == std::string::npos)
      return false;
    body_.add_var(scope.rename(spelling(decls[0])), "", true, line);
    body_.hoisted.push_back(src_.line_directive(line) + lane + text + "\n");
    return true;
  }
  if (sites != decls.size()) throw Refusal{"a declaration of threadgroup and thread variables together", line};
  for (CXCursor v : decls) {
    const ThreadgroupSite& site = *src_.threadgroup_site(v);
    const std::string name = scope.rename(spelling(v));
    body_.add_var(name, "", true, line);  // bound once for every region, never kept per thread
    body_.hoisted.push_back(src_.line_directive(line) +
                            lane + fmt::format("auto& {} = ::mtlsim::threadgroup_local<{}>([]{{}}, \"{}\");\n", name,
                                               rename_words(site.type, scope), site.name));
  }
  return true;
}

// `typedef float U;` (qmv_impl) or `using U = float;` at the top level: a type every region may
// name, declared at the top of the loop form (where the template aliases are) unless it names a
// value of the body.
bool Flattener::type_declaration(CXCursor s, const Scope& scope) {
  std::vector<CXCursor> decls = children(s);
  for (CXCursor d : decls)
    if (clang_getCursorKind(d) != CXCursor_TypedefDecl && clang_getCursorKind(d) != CXCursor_TypeAliasDecl) return false;
  const std::string text = src_.render(s, scope, true);
  bool names_a_value = false;
  for_each_identifier(text, [&](const std::string& word, bool member) {
    auto v = body_.var_by_name.find(word);
    names_a_value = !member && v != body_.var_by_name.end() && !body_.vars[v->second].constant;
    return !names_a_value;
  });
  if (decls.empty() || names_a_value) return false;
  for (CXCursor d : decls) body_.add_var(scope.rename(spelling(d)), "", true, src_.line_of(s));
  body_.hoisted.push_back(src_.line_directive(src_.line_of(s)) + text + "\n");
  return true;
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
  std::vector<Edit> replaced = extract_operands(s, scope);
  if (replaced.empty()) return false;
  auto [b, e] = src_.range_of(s, true);
  Item item = make_item(Item::code, src_.line_of(s), src_.render(b, e, scope, replaced));
  item.region = body_.region;
  if (kind == CXCursor_DeclStmt) declaration_of_extracted(s, scope, item, replaced);
  body_.note_uses(item.text, body_.region);
  body_.items.push_back(std::move(item));
  return true;
}

// Each sync call in `s` evaluated first into a temporary `mtlsim_s<N>` (in order), where every one is
// evaluated unconditionally (no `?:`, `&&`, `||` in `s`): the edits that name them; none otherwise.
std::vector<Edit> Flattener::extract_operands(CXCursor s, const Scope& scope) {
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
    return {};
  std::vector<Edit> replaced;
  for (CXCursor call : calls) {
    Target target;
    target.kind = Target::declare;
    target.text = "auto ";
    target.var_name = fmt::format("mtlsim_s{}", ++temporaries_);
    target.var_type = kept_type(call, scope);
    const size_t at = body_.items.size();
    sync_call(call, target, scope, src_.line_of(call));
    if (target.var_type.rfind("::std::remove_cvref_t<decltype(", 0) == 0 && body_.items.size() == at + 1) {
      Item& sync = body_.items.back();  // kept in the type its argument gives: the call's must be the same
      sync.guard += fmt::format("static_assert(::std::is_same_v<{}, ::std::remove_cvref_t<decltype({})>>, \"mtlgen loop form: the "
                                "result of `{}` at line {} is kept in its argument's type\");\n",
                                target.var_type, sync.text, callee_name(call), sync.line);
    }
    auto [cb, ce] = src_.range_of(call, false);
    replaced.push_back({cb, ce, target.var_name});
  }
  return replaced;
}

// The type a temporary is kept in when a later region reads it: the call's, where clang knows it
// (`auto` otherwise, which cannot be kept). A dependent call of a simd function that returns its first argument's type (not simd_ballot,
// simd_any, simd_all, simd_is_first; not a user's overload) is kept in that type where the
// argument names only values whose types are known (`mtlsim_h1_data.index`:
// `decltype(::std::declval<IndexValPair<mtlsim_h1_U>>().index)`); extract_operands checks per
// instantiation that the call's type is that one.
std::string Flattener::kept_type(CXCursor call, const Scope& scope) const {
  const std::string type = spelling(clang_getCursorType(call));
  const auto dependent = [](const std::string& t) {
    return t.empty() || has_word(t, "dependent") || t.find("type-parameter") != std::string::npos;
  };
  if (!dependent(type)) return rename_words(type, scope);
  static const std::set<std::string> other = {"simd_ballot", "simd_any", "simd_all", "simd_is_first", "simd_active_threads_mask",
                                              "quad_ballot", "quad_any", "quad_all", "quad_is_first", "quad_active_threads_mask"};
  const std::string name = callee_name(call);
  if (!is_sync_builtin(name) || other.count(name) || name.find("barrier") != std::string::npos ||
      clang_Cursor_getNumArguments(call) < 1 || calls_user_template(call, name))
    return "auto";
  const std::string arg = src_.render(clang_Cursor_getArgument(call, 0), scope);
  std::string out;
  bool known = true;
  size_t at = 0;
  for_each_identifier(arg, [&](const std::string& word, bool member) {
    const size_t found = arg.find(word, at);
    out += arg.substr(at, found - at);
    at = found + word.size();
    const auto v = body_.var_by_name.find(word);
    if (member || v == body_.var_by_name.end()) {  // a member, or a name the top of the function sees too
      out += word;
      return true;
    }
    const Var& var = body_.vars[size_t(v->second)];
    known = !var.type.empty() && !dependent(var.type) && var.type != "auto";
    out += fmt::format("::std::declval<{}>()", var.type);
    return known;
  });
  if (!known) return "auto";
  return fmt::format("::std::remove_cvref_t<decltype({}{})>", out, arg.substr(std::min(at, arg.size())));
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

// A dependent call of a simd function that a user file overloads (MLX's softmax.h `simd_max(maxval)`,
// `maxval` of type `AccT`, beside bf16_math.h's `simd_max(bfloat16_t)`): which function it calls is
// known only per instantiation, so the loop form, a template too, checks it at each instantiation
// it is compiled for, before the call: the shim's simd function (`template <simd_value T> T
// simd_max(T, int line = ...)`) must take the arguments (`simd_max<A0>(args)` compiles, A0 the
// first argument's type without cv and reference), and no user overload may take A0 itself as its
// first parameter. The simd function then matches the first argument exactly where every user
// overload, a function and no template, needs a conversion: it is the better candidate there, so
// no user overload is chosen (at best the call is ambiguous, which the kernel itself would be).
// A template overload of the kernel's file (MLX's arg_reduce.metal `simd_shuffle_down(IndexValPair<U>,
// uint16_t)`) would be chosen wherever it can take A0 (it is the more specialised), so it must not
// be viable there: a generic lambda with its template parameters and first parameter must not take
// A0 (`requires { []<typename U>(IndexValPair<U>) {}(declval<A0>()); }` is false).
// Where `chosen` is that template (the call inlines it, calls_user_template), the checks turn
// round: the shim's simd function must not take the arguments (`requires { ::metal::f(args); }` is
// false), and no function overload may take A0 itself (which would beat the template); the inliner
// checks that A0 is the template's first parameter with the arguments it deduced
// (HelperInliner::deduced). Where a check fails, g++ refuses the loop form and the module runs the
// kernel as fibers (LoopForms: loop_form.txt says so). Another template overload is refused here.
std::string Flattener::overload_guard(CXCursor call, const std::string& name, const Scope& scope, int line, CXCursor chosen) const {
  const int n = clang_Cursor_getNumArguments(call);
  if (n < 1) throw Refusal{fmt::format("`{}` without arguments, which a user file overloads", name), line};
  std::string first, all;
  for (int i = 0; i < n; ++i) {
    const std::string arg = src_.render(clang_Cursor_getArgument(call, unsigned(i)), scope);
    all += (i ? ", " : "") + arg;
    if (i == 0) first = arg;
  }
  const bool builtin = clang_Cursor_isNull(chosen);
  std::string out = fmt::format("{{ using mtlsim_a0 = ::std::remove_cvref_t<decltype(({}))>;\n", first);
  if (builtin) out += fmt::format("using mtlsim_builtin [[maybe_unused]] = decltype({}<mtlsim_a0>({}));\n", name, all);
  else out += fmt::format("static_assert(!requires {{ ::metal::{}({}); }}, \"mtlgen loop form: `{}` at line {} calls the simd "
                          "function here, not the overload of the user's files\");\n", name, all, name, line);
  const std::string calls = builtin ? "calls an overload of the user's files here, not the simd function"
                                    : "calls another overload of the user's files here";
  for (CXCursor decl : src_.user_declarations(name)) {
    const int at = src_.line_of(decl);
    if (!clang_Cursor_isNull(clang_getSpecializedCursorTemplate(decl))) continue;  // a template's instantiation: the template is checked
    if (clang_getCursorKind(decl) != CXCursor_FunctionDecl) {
      if (!builtin && clang_equalCursors(clang_getCanonicalCursor(decl), clang_getCanonicalCursor(chosen))) continue;
      const std::string probe = builtin ? template_probe(decl) : "";
      if (probe.empty())
        throw Refusal{fmt::format("`{}` is overloaded by a template of the user's files (line {} of its file)", name, at), line};
      out += fmt::format("static_assert(!requires {{ {}(::std::declval<mtlsim_a0>()); }}, \"mtlgen loop form: `{}` at line {} "
                         "{}\");\n", probe, name, line, calls);
      continue;
    }
    if (clang_Cursor_getNumArguments(decl) < 1) continue;
    const CXType param = clang_getCanonicalType(clang_getCursorType(clang_Cursor_getArgument(decl, 0)));
    if (spelling(param).find("type-parameter") != std::string::npos || has_word(spelling(param), "dependent"))
      throw Refusal{fmt::format("`{}` is overloaded for a type of a template (line {} of its file)", name, at), line};
    // clang's canonical `half` is __fp16 (msl_parse.cpp), which g++ does not know
    const std::string type = std::regex_replace(spelling(param), std::regex(R"(\b__fp16\b)"), "half");
    out += fmt::format("static_assert(!::std::is_same_v<mtlsim_a0, ::std::remove_cvref_t<{}>>, \"mtlgen loop form: `{}` at line {} "
                       "{}\");\n", type, name, line, calls);
  }
  return out + "}\n";
}

// `[]<typename U>(IndexValPair<U>) {}`: a generic lambda that takes what the function template
// `tmpl` of the kernel's file takes as its first argument; "" for a template elsewhere or without
// parameters.
std::string Flattener::template_probe(CXCursor tmpl) const {
  const FilePos at = src_.ctx().pos(tmpl);
  if (at.file != &src_.file()) return "";
  CXCursor first = clang_getNullCursor();
  for (CXCursor c : children(tmpl))
    if (clang_getCursorKind(c) == CXCursor_ParmDecl) {
      first = c;
      break;
    }
  if (clang_Cursor_isNull(first)) return "";
  const UserFile& f = src_.file();
  size_t open = f.token_at(src_.range_of(tmpl, false).first);
  if (f.tokens[open].text != "template" || f.tokens[open + 1].text != "<") return "";
  size_t close = open + 1;
  for (int depth = 0; close < f.tokens.size(); ++close) {
    const std::string& t = f.tokens[close].text;
    depth += t == "<" ? 1 : t == ">" ? -1 : t == ">>" ? -2 : 0;
    if (depth <= 0) break;
  }
  const size_t type_at = specifier_start(f, f.token_at(src_.ctx().begin(first).offset));
  return fmt::format("[]<{}>({}) {{}}", src_.render(f.tokens[open + 1].end, f.tokens[close].begin, Scope{}),
                     src_.render(f.tokens[type_at].begin, src_.ctx().pos(first).offset, Scope{}));
}

// Which function a call of a simd function's name calls where the kernel's file defines a template
// of that name (MLX's arg_reduce.metal `simd_shuffle_down(IndexValPair<U>, uint16_t)`): clang's
// resolution where it made one; for a dependent call, the template where the first argument's type
// is spelled as its first parameter's (`IndexValPair<T>` for `IndexValPair<U>`), the shim's simd
// function otherwise. Either choice is checked per instantiation (overload_guard). A name the file
// defines otherwise (a helper, an overloaded or a non-template one): true, as before.
bool Flattener::calls_user_template(CXCursor call, const std::string& name) const {
  if (!src_.defined_here(name)) return false;
  const CXCursor callee = clang_getCursorReferenced(call);
  if (!clang_Cursor_isNull(callee)) return src_.ctx().in_user_file(callee);
  const CXCursor def = src_.definition(name);
  if (!is_sync_builtin(name) || clang_Cursor_isNull(def) || clang_getCursorKind(def) != CXCursor_FunctionTemplate) return true;
  if (clang_Cursor_getNumArguments(call) < 1) return true;
  return inliner_.pattern_matches(def, clang_Cursor_getArgument(call, 0));
}

void Flattener::sync_call(CXCursor call, Target target, const Scope& scope, int line) {
  const std::string name = callee_name(call);
  const int n = clang_Cursor_getNumArguments(call);
  for (int i = 0; i < n; ++i)
    if (sync_.contains_sync(clang_Cursor_getArgument(call, unsigned(i))))
      throw Refusal{fmt::format("a barrier or simd function in an argument of `{}`", name), line};
  const bool user_template = calls_user_template(call, name);
  if (src_.defined_here(name) && user_template) {
    const CXCursor def = src_.definition(name);
    const bool dependent = clang_Cursor_isNull(clang_getCursorReferenced(call));
    const bool overload = is_sync_builtin(name) && dependent && clang_getCursorKind(def) == CXCursor_FunctionTemplate;
    return inliner_.inline_helper(call, name, target, scope, line, overload ? overload_guard(call, name, scope, line, def) : "");
  }
  std::string guard;
  if ((src_.defined_here(name) || src_.defined_elsewhere(name)) && !(is_sync_builtin(name) && calls_the_builtin(call))) {
    if (!is_sync_builtin(name) || !clang_Cursor_isNull(clang_getCursorReferenced(call)))
      throw Refusal{fmt::format("`{}`, which reaches a barrier or simd function, is defined in another file than the kernel "
                                "(a loop form inlines only helpers of the kernel's own file)", name), line};
    guard = overload_guard(call, name, scope, line, clang_getNullCursor());
  }
  if (!is_sync_builtin(name)) throw Refusal{fmt::format("`{}` is not a barrier or simd function", name), line};
  if (is_matrix_collective(name))
    throw Refusal{fmt::format("`{}`, a simdgroup matrix function (its collective writes through its arguments)", name), line};
  Item item = make_item(Item::sync, line, src_.render(call, scope));
  item.region = body_.region;
  item.guard = std::move(guard);
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
  std::vector<Edit> replaced;
  if (sync_.contains_sync(e)) {
    if (clang_getCursorKind(e) == CXCursor_CallExpr && sync_.is_sync_call(callee_name(e)))
      return sync_call(e, result, scope, src_.line_of(ret));
    replaced = extract_operands(ret, scope);  // `return IndexValPair<U>{simd_shuffle_down(...), simd_shuffle_down(...)};`
    if (replaced.empty()) throw Refusal{"a helper returns an expression with a simd function evaluated conditionally", src_.line_of(ret)};
  }
  Target target = result;
  if (target.kind == Target::declare) target.var = body_.add_var(target.var_name, target.var_type, false, src_.line_of(ret));
  auto [b, e_end] = src_.range_of(kids[0], false);
  Item item = make_item(Item::result, src_.line_of(ret), src_.render(b, e_end, scope, replaced));
  item.region = body_.region;
  body_.note_uses(item.text, body_.region);
  if (target.kind == Target::assign) body_.note_uses(target.text, body_.region);
  item.target = target;
  body_.items.push_back(std::move(item));
}

}  // namespace mtlgen::msl::loop_form
