// The loop rewrite's analysis (which calls are sync points) and flattening: the kernel's body,
// helpers inlined, as a list of top-level items split into regions at its sync points.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "msl/msl_loop_rewrite.h"

namespace mtlgen::msl::loop_form {

// Whether `c` reaches a sync point: a barrier or simd function, or a helper that does.
bool LoopFormWriter::contains_sync(CXCursor c) {
  if (clang_getCursorKind(c) == CXCursor_CallExpr && is_sync_call(callee_name(c))) return true;
  bool found = false;
  visit(c, [&](CXCursor x) {
    if (clang_getCursorKind(x) == CXCursor_CallExpr && is_sync_call(callee_name(x))) {
      found = true;
      return CXChildVisit_Break;
    }
    return CXChildVisit_Recurse;
  });
  return found;
}

bool LoopFormWriter::is_sync_call(const std::string& name) {
  if (definitions_.count(name)) return helper_syncs(name);
  return !other_definitions_.count(name) && is_sync_builtin(name);
}

bool LoopFormWriter::helper_syncs(const std::string& name) {
  auto memo = syncs_.find(name);
  if (memo != syncs_.end()) return memo->second;
  syncs_[name] = true;  // a recursive helper counts as one: it is refused where called
  bool any = false;
  for (CXCursor def : definitions_[name]) any = any || contains_sync(def);
  return syncs_[name] = any;
}

bool LoopFormWriter::contains(CXCursor c, CXCursorKind kind) {
  bool found = clang_getCursorKind(c) == kind;
  visit(c, [&](CXCursor x) {
    if (clang_getCursorKind(x) == kind) {
      found = true;
      return CXChildVisit_Break;
    }
    return CXChildVisit_Recurse;
  });
  return found;
}

void LoopFormWriter::refuse_threadgroup_variables(CXCursor fn) {
  auto [b, e] = range_of(fn, false);
  for (const ThreadgroupSite& s : d_.threadgroup_sites)
    if (s.file == main().path && s.begin >= b && s.end <= e)
      throw Refusal{fmt::format("it declares the threadgroup variable `{}` in a body", s.name),
                    1 + int(std::count(original_.begin(), original_.begin() + s.begin, '\n'))};
}

// Identifier tokens of `text` (rendered, so helpers' names are already the loop form's).
void LoopFormWriter::note_uses(const std::string& text, int region) {
  for (size_t i = 0; i < text.size();) {
    if (!(std::isalpha(static_cast<unsigned char>(text[i])) || text[i] == '_')) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
    bool member = i > 0 && (text[i - 1] == '.' || (i > 1 && text.compare(i - 2, 2, "->") == 0));
    auto v = var_by_name_.find(text.substr(i, j - i));
    if (!member && v != var_by_name_.end() && vars_[v->second].region != region && !vars_[v->second].constant)
      vars_[v->second].replicated = true;
    i = j;
  }
}

int LoopFormWriter::add_var(const std::string& name, const std::string& type, bool constant, int line) {
  vars_.push_back({name, type, region_, constant, false, line});
  var_by_name_[name] = int(vars_.size()) - 1;
  return int(vars_.size()) - 1;
}

// Identifiers of a type spelling renamed (`T` of a helper becomes its alias).
std::string LoopFormWriter::rename_words(const std::string& type, const Scope& scope) {
  std::string out, word;
  auto flush = [&] {
    out += scope.rename(word);
    word.clear();
  };
  for (char ch : type) {
    if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') {
      word += ch;
    } else {
      flush();
      out += ch;
    }
  }
  flush();
  return out;
}

void LoopFormWriter::flatten(CXCursor body, const Scope& scope, const Target* result, bool helper) {
  flatten(children(body), scope, result, helper);
}

void LoopFormWriter::flatten(const std::vector<CXCursor>& stmts, const Scope& scope, const Target* result, bool helper) {
  for (size_t i = 0; i < stmts.size(); ++i) {
    CXCursor s = stmts[i];
    const bool last = i + 1 == stmts.size();
    if (clang_getCursorKind(s) == CXCursor_ReturnStmt && helper) {
      if (!last) throw Refusal{"a helper returns before its end", line_of(s)};
      helper_return(s, scope, *result);
      continue;
    }
    if (!contains_sync(s)) {
      if (contains(s, CXCursor_ReturnStmt)) {
        if (helper) throw Refusal{"a helper returns before its end", line_of(s)};
        if (!return_line_) return_line_ = line_of(s);
      }
      code(s, scope);
      continue;
    }
    if (return_line_)
      throw Refusal{fmt::format("a thread may return (line {}) before the barrier or simd function at line {}",
                                return_line_, line_of(s)), line_of(s)};
    if (control_statement(s, scope)) continue;
    if (!extract_sync_calls(s, scope)) sync_statement(s, scope);
  }
}

void LoopFormWriter::code(CXCursor s, const Scope& scope) {
  Item item = make_item(Item::code, line_of(s), render(s, scope, true));
  item.region = region_;
  if (clang_getCursorKind(s) == CXCursor_DeclStmt) declaration(s, scope, item);
  note_uses(item.text, region_);
  items_.push_back(std::move(item));
}

// A top-level declaration: its variable may be needed in later regions.
void LoopFormWriter::declaration(CXCursor s, const Scope& scope, Item& item) {
  std::vector<CXCursor> decls = children(s);
  bool constant = has_word(item.text, "constexpr");
  if (has_word(item.text, "static")) throw Refusal{"a static local", line_of(s)};
  if (decls.size() != 1 || clang_getCursorKind(decls[0]) != CXCursor_VarDecl) {
    for (CXCursor v : decls) add_var(scope.rename(spelling(v)), "", constant, line_of(s));
    multi_.push_back(int(vars_.size()) - 1);
    return;
  }
  CXCursor v = decls[0];
  std::string type = rename_words(spelling(clang_getCursorType(v)), scope);
  item.var = add_var(scope.rename(spelling(v)), type, constant, line_of(s));
  auto [b, e] = range_of(s, true);
  FilePos name = ctx_.pos(v);
  std::string rendered_prefix = render(b, name.offset, scope);
  item.name_at = unsigned(rendered_prefix.size());
  item.name_end = item.name_at + unsigned(vars_[item.var].name.size());
  item.has_init = has_initializer(item.text.substr(item.name_end));
  vars_[item.var].initialised = item.has_init;
  if (constant) hoisted_.push_back(fmt::format("#line {}\n{}\n", item.line, item.text));
  (void)e;
}

// What follows a declared name: `[N][M] = {...};`, ` = x;`, `{x};`, `(x);` or just `[N];`.
bool LoopFormWriter::has_initializer(const std::string& after_name) {
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
bool LoopFormWriter::extract_sync_calls(CXCursor s, const Scope& scope) {
  CXCursorKind kind = clang_getCursorKind(s);
  if (kind != CXCursor_DeclStmt && !clang_isExpression(kind)) return false;
  if (kind == CXCursor_DeclStmt && children(s).size() != 1) return false;
  CXCursor direct = strip(kind == CXCursor_DeclStmt ? children(children(s)[0]).back() : s);
  auto is_sync = [&](CXCursor c) { return clang_getCursorKind(c) == CXCursor_CallExpr && is_sync_call(callee_name(c)); };
  if (is_sync(direct)) return false;  // the plain form
  if (kind == CXCursor_BinaryOperator && is_assignment(children(s)[0]) && is_sync(strip(children(s)[1]))) return false;
  std::vector<CXCursor> calls;
  visit(s, [&](CXCursor x) {
    if (clang_getCursorKind(x) == CXCursor_CallExpr && is_sync_call(callee_name(x))) {
      calls.push_back(x);
      return CXChildVisit_Continue;
    }
    return CXChildVisit_Recurse;
  });
  auto [b, e] = range_of(s, true);
  std::string text = original_.substr(b, e - b);
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
    sync_call(call, target, scope, line_of(call));
    auto [cb, ce] = range_of(call, false);
    replaced.push_back({cb, ce, target.var_name});
  }
  Item item = make_item(Item::code, line_of(s), render(b, e, scope, replaced));
  item.region = region_;
  if (kind == CXCursor_DeclStmt) declaration_of_extracted(s, scope, item, replaced);
  note_uses(item.text, region_);
  items_.push_back(std::move(item));
  return true;
}

// The type a temporary is kept in when a later region reads it: the call's, where clang knows it
// (`auto` otherwise, which cannot be kept).
std::string LoopFormWriter::kept_type(CXCursor call, const Scope& scope) {
  const std::string type = spelling(clang_getCursorType(call));
  if (type.empty() || has_word(type, "dependent") || type.find("type-parameter") != std::string::npos) return "auto";
  return rename_words(type, scope);
}

// declaration() for a statement whose sync calls were replaced by temporaries.
void LoopFormWriter::declaration_of_extracted(CXCursor s, const Scope& scope, Item& item, const std::vector<Edit>& replaced) {
  CXCursor v = children(s)[0];
  if (has_word(item.text, "constexpr") || has_word(item.text, "static"))
    throw Refusal{"a constexpr or static declaration initialised by a simd function", line_of(s)};
  item.var = add_var(scope.rename(spelling(v)), rename_words(spelling(clang_getCursorType(v)), scope), false, line_of(s));
  auto [b, e] = range_of(s, true);
  item.name_at = unsigned(render(b, ctx_.pos(v).offset, scope, replaced).size());
  item.name_end = item.name_at + unsigned(vars_[item.var].name.size());
  item.has_init = true;
  (void)e;
}

// `f(...);`, `x = f(...);` or `T x = f(...);` where f is a sync point.
void LoopFormWriter::sync_statement(CXCursor s, const Scope& scope) {
  CXCursor call = strip(s);
  Target target;
  CXCursorKind kind = clang_getCursorKind(call);
  if (kind == CXCursor_DeclStmt) {
    std::vector<CXCursor> decls = children(call);
    if (decls.size() != 1 || clang_getCursorKind(decls[0]) != CXCursor_VarDecl)
      throw Refusal{"a barrier or simd function inside a declaration of several variables", line_of(s)};
    CXCursor v = decls[0];
    std::vector<CXCursor> kids = children(v);
    if (kids.empty()) throw Refusal{"unexpected declaration", line_of(s)};
    call = strip(kids.back());
    auto [b, e] = range_of(s, true);
    target.kind = Target::declare;
    target.text = render(b, ctx_.pos(v).offset, scope);
    if (has_word(target.text, "constexpr") || has_word(target.text, "static"))
      throw Refusal{"a constexpr or static declaration initialised by a simd function", line_of(s)};
    target.var_name = scope.rename(spelling(v));
    target.var_type = rename_words(spelling(clang_getCursorType(v)), scope);
    (void)e;
  } else if (kind == CXCursor_BinaryOperator) {
    std::vector<CXCursor> kids = children(call);
    if (kids.size() != 2 || !is_assignment(kids[0])) throw Refusal{"a barrier or simd function inside an expression", line_of(s)};
    if (contains_sync(kids[0])) throw Refusal{"a barrier or simd function inside an expression", line_of(s)};
    target.kind = Target::assign;
    target.text = render(kids[0], scope);
    call = strip(kids[1]);
  }
  if (clang_getCursorKind(call) != CXCursor_CallExpr)
    throw Refusal{"a barrier or simd function inside a statement (a branch, a loop or an expression)", line_of(s)};
  sync_call(call, target, scope, line_of(s));
}

bool LoopFormWriter::is_assignment(CXCursor lhs) {
  const UserFile& f = main();
  size_t t = f.token_at(ctx_.end(lhs).offset);
  return t < f.tokens.size() && f.tokens[t].text == "=";
}

void LoopFormWriter::sync_call(CXCursor call, Target target, const Scope& scope, int line) {
  const std::string name = callee_name(call);
  const int n = clang_Cursor_getNumArguments(call);
  for (int i = 0; i < n; ++i)
    if (contains_sync(clang_Cursor_getArgument(call, unsigned(i))))
      throw Refusal{fmt::format("a barrier or simd function in an argument of `{}`", name), line};
  if (definitions_.count(name)) return inline_helper(call, name, target, scope, line);
  if (!is_sync_builtin(name)) throw Refusal{fmt::format("`{}` is not a barrier or simd function", name), line};
  Item item = make_item(Item::sync, line, render(call, scope));
  item.region = region_;
  item.barrier = name == "threadgroup_barrier";
  note_uses(item.text, region_);
  ++region_;
  note_uses(item.text, region_);  // its result is read in the next region: decltype names them
  if (target.kind == Target::assign) note_uses(target.text, region_);
  if (target.kind == Target::declare) target.var = add_var(target.var_name, target.var_type, false, line);
  item.target = target;
  items_.push_back(std::move(item));
}

// The returned expression of an inlined helper goes where its call's result went.
void LoopFormWriter::helper_return(CXCursor ret, const Scope& scope, const Target& result) {
  std::vector<CXCursor> kids = children(ret);
  if (kids.empty()) return;
  CXCursor e = strip(kids[0]);
  if (contains_sync(e)) {
    if (clang_getCursorKind(e) != CXCursor_CallExpr) throw Refusal{"a helper returns an expression with a simd function", line_of(ret)};
    return sync_call(e, result, scope, line_of(ret));
  }
  Target target = result;
  if (target.kind == Target::declare) target.var = add_var(target.var_name, target.var_type, false, line_of(ret));
  Item item = make_item(Item::result, line_of(ret), render(kids[0], scope));
  item.region = region_;
  note_uses(item.text, region_);
  if (target.kind == Target::assign) note_uses(target.text, region_);
  item.target = target;
  items_.push_back(std::move(item));
}

// A pointer kept for a later region may point at a local (`p = &x`, `p = arr`): such locals live
// in the frames too, so that they outlive their region.
void LoopFormWriter::keep_pointed_to() {
  for (Var& v : vars_)
    if (v.type.find('[') != std::string::npos && !v.constant) v.replicated = true;
  for (const Item& item : items_) {
    const std::string& t = item.text;
    for (size_t i = t.find('&'); i != std::string::npos; i = t.find('&', i + 1)) {
      if ((i + 1 < t.size() && t[i + 1] == '&') || (i > 0 && t[i - 1] == '&')) continue;
      size_t p = i;  // unary `&` follows an operator or `(`: not `a & b`, not `T& x`
      while (p > 0 && t[p - 1] == ' ') --p;
      if (p > 0 && (std::isalnum(static_cast<unsigned char>(t[p - 1])) || std::strchr("_)]>", t[p - 1]))) continue;
      size_t b = i + 1;
      while (b < t.size() && t[b] == ' ') ++b;
      size_t e = b;
      while (e < t.size() && (std::isalnum(static_cast<unsigned char>(t[e])) || t[e] == '_')) ++e;
      auto v = var_by_name_.find(t.substr(b, e - b));
      if (v != var_by_name_.end() && !vars_[v->second].constant) vars_[v->second].replicated = true;
    }
  }
}

}  // namespace mtlgen::msl::loop_form
