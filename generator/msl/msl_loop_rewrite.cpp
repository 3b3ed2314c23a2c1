// The loop form of each kernel (issue 17 item 2; Unit::loop_form): a second function beside the
// kernel that runs a whole threadgroup, each barrier-free region as a loop over the threads in
// the run's lane order (mtlsim/msl_loops.h), as PoCL and MCUDA compile work-groups. It is made
// only where the structure is plain to see; otherwise the kernel keeps running as one fiber per
// thread, and the refusal says why.
//
// What qualifies: every sync point (threadgroup_barrier, simdgroup_barrier, simd_* and quad_*
// functions, and calls of helpers that contain one) is a statement at the top level of the body,
// either the call itself or the whole right-hand side of `x = ...;` or of a one-variable
// declaration. Helpers called that way are inlined (their own bodies must qualify; their names
// get the prefix mtlsim_h<N>_), and a `return` may only follow the last sync point (a thread that
// left earlier would be missing from a barrier: the fiber path reports that).
//
// What the form looks like: values declared at the top level and used in a later region live in
// per-thread frames (`auto* mtlsim_f_x`, one slot per thread) and are bound by reference in each
// region; a sync point's call ends its region (the runtime only records the arrival and completes
// it with the last one) and its result is read at the head of the next region. Every copied
// statement is preceded by `#line N`, so reports name the user's lines.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <set>

#include "msl/loop_form_revision.h"
#include "msl/msl_internal.h"

namespace mtlgen::msl {

namespace {

void visit(CXCursor c, const std::function<CXChildVisitResult(CXCursor)>& f) {
  clang_visitChildren(
      c,
      [](CXCursor child, CXCursor, CXClientData data) {
        return (*static_cast<const std::function<CXChildVisitResult(CXCursor)>*>(data))(child);
      },
      const_cast<std::function<CXChildVisitResult(CXCursor)>*>(&f));
}

std::vector<CXCursor> children(CXCursor c) {
  std::vector<CXCursor> out;
  visit(c, [&](CXCursor child) {
    out.push_back(child);
    return CXChildVisit_Continue;
  });
  return out;
}

bool is_sync_builtin(const std::string& name) {
  return name == "threadgroup_barrier" || name == "simdgroup_barrier" || name.rfind("simd_", 0) == 0 ||
         name.rfind("quad_", 0) == 0;
}

bool is_function(CXCursorKind k) { return k == CXCursor_FunctionDecl || k == CXCursor_FunctionTemplate; }

// Parentheses and implicit conversions around an expression.
CXCursor strip(CXCursor c) {
  for (;;) {
    CXCursorKind k = clang_getCursorKind(c);
    if (k != CXCursor_UnexposedExpr && k != CXCursor_ParenExpr) return c;
    std::vector<CXCursor> kids = children(c);
    if (kids.size() != 1) return c;
    c = kids[0];
  }
}

// Whether `word` occurs in `text` as a whole word (`static`, not `static_cast`).
bool has_word(const std::string& text, const std::string& word) {
  auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const size_t end = at + word.size();
    if ((at == 0 || !is_word(text[at - 1])) && (end == text.size() || !is_word(text[end]))) return true;
  }
  return false;
}

// The name a call calls; in a template, a dependent call names it only in its callee's
// OverloadedDeclRef (`tg_sum<TG>(x)`, `simd_sum(value)` with `value` of type T). "" for a cast.
std::string callee_name(CXCursor call) {
  std::string name = spelling(call);
  if (!name.empty()) return name;
  std::vector<CXCursor> kids = children(call);
  if (kids.empty()) return "";
  std::function<std::string(CXCursor, int)> find = [&](CXCursor c, int depth) -> std::string {
    CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_OverloadedDeclRef || (k == CXCursor_DeclRefExpr && !spelling(c).empty())) return spelling(c);
    // A cast's type, or another call (a dependent operator's first operand): no callee name.
    if (k == CXCursor_TypeRef || k == CXCursor_CallExpr || depth > 2) return "";
    std::vector<CXCursor> below = children(c);
    return below.empty() ? "" : find(below[0], depth + 1);
  };
  return find(kids[0], 0);
}

// A value a region declares and a later one uses, or a constant every region may use.
struct Var {
  std::string name;       // in the loop form
  std::string type;       // for the frame (clang's spelling, renamed)
  int region = 0;         // declared in
  bool constant = false;  // constexpr: copied to the top of the function, never replicated
  bool replicated = false;
  int line = 0;
  bool initialised = true;  // declared with a value (its frame need not hold the fresh-local fill)
};

// Where a sync point's (or an inlined helper's) result goes.
struct Target {
  enum Kind { none, assign, declare } kind = none;
  std::string text;  // assign: the left-hand side; declare: the declared type (`const float `)
  int var = -1;      // declare: the variable, once the region that declares it is known
  std::string var_name, var_type;  // declare
};

// One top-level statement of the flattened body.
struct Item {
  enum Kind { code, sync, result } kind = code;
  int region = 0;
  int line = 0;
  std::string text;  // code: the statement; sync: the call; result: the returned expression
  int var = -1;      // code: the variable a one-variable declaration declares
  unsigned name_at = 0, name_end = 0;  // code: its name in `text` (a replicated one is renamed)
  bool has_init = true;
  bool barrier = false;  // sync: a threadgroup_barrier (ends a stretch the lane order runs through)
  Target target;     // sync, result
};

Item make_item(Item::Kind kind, int line, std::string text) {
  Item item;
  item.kind = kind;
  item.line = line;
  item.text = std::move(text);
  return item;
}

// Names of an inlined helper's parameters, locals and template parameters in the loop form.
struct Scope {
  std::map<std::string, std::string> renames;
  std::string rename(const std::string& s) const {
    auto it = renames.find(s);
    return it == renames.end() ? s : it->second;
  }
};

struct Refusal {
  std::string why;
  int line = 0;
};

class LoopFormWriter {
 public:
  LoopFormWriter(Context& ctx, const Description& d, const std::string& original)
      : ctx_(ctx), d_(d), original_(original) {
    collect_definitions(clang_getTranslationUnitCursor(ctx.tu()));
  }

  // The loop form of the kernel function `name`, or why it has none.
  LoopFormKernel write(const std::string& function, const EntryPoint& entry, std::string& text) {
    LoopFormKernel k;
    k.function = function;
    reset();
    CXCursor fn = definition(function);
    if (clang_Cursor_isNull(fn)) return refuse(k, {"the kernel's definition is not in the main file", 0});
    try {
      std::string out = write_function(fn, entry);
      k.loop_function = "mtlsim_loops_" + function;
      text += out;
    } catch (const Refusal& r) {
      return refuse(k, r);
    }
    return k;
  }

 private:
  LoopFormKernel refuse(LoopFormKernel k, const Refusal& r) {
    k.refusal = r.why;
    k.refusal_line = r.line;
    return k;
  }

  void reset() {
    items_.clear();
    vars_.clear();
    hoisted_.clear();
    var_by_name_.clear();
    multi_.clear();
    region_ = 0;
    helpers_ = 0;
    temporaries_ = 0;
    return_line_ = 0;
    active_.clear();
  }

  // ---- source ----

  const UserFile& main() const {
    for (const auto& [path, f] : ctx_.files())
      if (f.is_main) return f;
    throw Refusal{"no main file", 0};
  }

  int line_of(CXCursor c) { return ctx_.begin(c).loc.line; }

  void collect_definitions(CXCursor parent) {
    visit(parent, [&](CXCursor c) {
      CXCursorKind k = clang_getCursorKind(c);
      FilePos at = ctx_.pos(c);
      if (!at.file) return CXChildVisit_Continue;  // the shim and the system headers
      if (k == CXCursor_Namespace) collect_definitions(c);
      if (is_function(k) && clang_isCursorDefinition(c) &&
          clang_Cursor_isNull(clang_getSpecializedCursorTemplate(c))) {
        if (at.file->is_main) definitions_[spelling(c)].push_back(c);
        else other_definitions_.insert(spelling(c));
      }
      return CXChildVisit_Continue;
    });
  }

  CXCursor definition(const std::string& name) {
    auto it = definitions_.find(name);
    if (it == definitions_.end() || it->second.size() != 1) return clang_getNullCursor();
    return it->second[0];
  }

  CXCursor body_of(CXCursor fn) {
    for (CXCursor c : children(fn))
      if (clang_getCursorKind(c) == CXCursor_CompoundStmt) return c;
    return clang_getNullCursor();
  }

  // Byte range of a statement in the main file, with an expression statement's `;`.
  std::pair<unsigned, unsigned> range_of(CXCursor c, bool with_semicolon) {
    FilePos b = ctx_.begin(c), e = ctx_.end(c);
    if (!b.file || !b.file->is_main || e.file != b.file) throw Refusal{"a statement comes from a macro or another file", line_of(c)};
    unsigned end = e.offset;
    if (with_semicolon) {
      size_t t = b.file->token_at(end);
      if (t < b.file->tokens.size() && b.file->tokens[t].text == ";") end = b.file->tokens[t].end;
    }
    return {b.offset, end};
  }

  // The original text of [begin, end) with the simulator's edits and the scope's renames.
  std::string render(unsigned begin, unsigned end, const Scope& scope, std::vector<Edit> replaced = {}) {
    const UserFile& f = main();
    std::vector<Edit> edits;
    for (const Edit& r : replaced) edits.push_back({r.begin - begin, r.end - begin, r.text});
    auto it = ctx_.edits.find(f.path);
    if (it != ctx_.edits.end())
      for (const Edit& e : it->second)
        if (e.begin >= begin && e.end <= end) edits.push_back({e.begin - begin, e.end - begin, e.text});
    for (size_t i = f.token_at(begin); i < f.tokens.size() && f.tokens[i].end <= end; ++i) {
      const Token& t = f.tokens[i];
      if (t.kind != CXToken_Identifier || !scope.renames.count(t.text)) continue;
      if (i > 0 && (f.tokens[i - 1].text == "." || f.tokens[i - 1].text == "->" || f.tokens[i - 1].text == "::")) continue;
      edits.push_back({t.begin - begin, t.end - begin, scope.rename(t.text)});
    }
    return apply_edits(original_.substr(begin, end - begin), std::move(edits));
  }

  std::string render(CXCursor c, const Scope& scope, bool with_semicolon = false) {
    auto [b, e] = range_of(c, with_semicolon);
    return render(b, e, scope);
  }

  // ---- analysis ----

  // Whether `c` reaches a sync point: a barrier or simd function, or a helper that does.
  bool contains_sync(CXCursor c) {
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

  bool is_sync_call(const std::string& name) {
    if (definitions_.count(name)) return helper_syncs(name);
    return !other_definitions_.count(name) && is_sync_builtin(name);
  }

  bool helper_syncs(const std::string& name) {
    auto memo = syncs_.find(name);
    if (memo != syncs_.end()) return memo->second;
    syncs_[name] = true;  // a recursive helper counts as one: it is refused where called
    bool any = false;
    for (CXCursor def : definitions_[name]) any = any || contains_sync(def);
    return syncs_[name] = any;
  }

  bool contains(CXCursor c, CXCursorKind kind) {
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

  void refuse_threadgroup_variables(CXCursor fn) {
    auto [b, e] = range_of(fn, false);
    for (const ThreadgroupSite& s : d_.threadgroup_sites)
      if (s.file == main().path && s.begin >= b && s.end <= e)
        throw Refusal{fmt::format("it declares the threadgroup variable `{}` in a body", s.name),
                      1 + int(std::count(original_.begin(), original_.begin() + s.begin, '\n'))};
  }

  // ---- flattening ----

  // Identifier tokens of `text` (rendered, so helpers' names are already the loop form's).
  void note_uses(const std::string& text, int region) {
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

  int add_var(const std::string& name, const std::string& type, bool constant, int line) {
    vars_.push_back({name, type, region_, constant, false, line});
    var_by_name_[name] = int(vars_.size()) - 1;
    return int(vars_.size()) - 1;
  }

  // Identifiers of a type spelling renamed (`T` of a helper becomes its alias).
  static std::string rename_words(const std::string& type, const Scope& scope) {
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

  void flatten(CXCursor body, const Scope& scope, const Target* result, bool helper) {
    std::vector<CXCursor> stmts = children(body);
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
      if (!extract_sync_calls(s, scope)) sync_statement(s, scope);
    }
  }

  void code(CXCursor s, const Scope& scope) {
    Item item = make_item(Item::code, line_of(s), render(s, scope, true));
    item.region = region_;
    if (clang_getCursorKind(s) == CXCursor_DeclStmt) declaration(s, scope, item);
    note_uses(item.text, region_);
    items_.push_back(std::move(item));
  }

  // A top-level declaration: its variable may be needed in later regions.
  void declaration(CXCursor s, const Scope& scope, Item& item) {
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
  static bool has_initializer(const std::string& after_name) {
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
  bool extract_sync_calls(CXCursor s, const Scope& scope) {
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
      target.var_type = "auto";
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

  // declaration() for a statement whose sync calls were replaced by temporaries.
  void declaration_of_extracted(CXCursor s, const Scope& scope, Item& item, const std::vector<Edit>& replaced) {
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
  void sync_statement(CXCursor s, const Scope& scope) {
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

  bool is_assignment(CXCursor lhs) {
    const UserFile& f = main();
    size_t t = f.token_at(ctx_.end(lhs).offset);
    return t < f.tokens.size() && f.tokens[t].text == "=";
  }

  void sync_call(CXCursor call, Target target, const Scope& scope, int line) {
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
  void helper_return(CXCursor ret, const Scope& scope, const Target& result) {
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
  void keep_pointed_to() {
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

  // ---- inlining ----

  void inline_helper(CXCursor call, const std::string& name, const Target& target, const Scope& caller, int line) {
    if (active_.count(name)) throw Refusal{fmt::format("the helper `{}` is recursive", name), line};
    CXCursor def = definition(name);
    if (clang_Cursor_isNull(def)) throw Refusal{fmt::format("the helper `{}` is overloaded", name), line};
    refuse_threadgroup_variables(def);
    active_.insert(name);
    Scope scope;
    const std::string prefix = fmt::format("mtlsim_h{}_", ++helpers_);
    std::vector<CXCursor> params, tparams;
    collect_names(def, prefix, scope, params, tparams);
    template_aliases(call, def, tparams, params, scope, caller, line);
    bind_params(call, params, scope, caller, line);
    flatten(body_of(def), scope, &target, true);
    active_.erase(name);
  }

  void collect_names(CXCursor def, const std::string& prefix, Scope& scope, std::vector<CXCursor>& params,
                     std::vector<CXCursor>& tparams) {
    for (CXCursor c : children(def)) {
      CXCursorKind k = clang_getCursorKind(c);
      if (k == CXCursor_ParmDecl) params.push_back(c);
      if (k == CXCursor_TemplateTypeParameter || k == CXCursor_NonTypeTemplateParameter) tparams.push_back(c);
      if (k == CXCursor_TemplateTemplateParameter) throw Refusal{"a helper with a template template parameter", line_of(def)};
    }
    for (CXCursor c : params) scope.renames[spelling(c)] = prefix + spelling(c);
    for (CXCursor c : tparams) scope.renames[spelling(c)] = prefix + spelling(c);
    visit(def, [&](CXCursor c) {
      if (clang_getCursorKind(c) == CXCursor_VarDecl) scope.renames[spelling(c)] = prefix + spelling(c);
      return CXChildVisit_Recurse;
    });
  }

  // Tokens of a parameter's declared type (before its name), without address spaces and cv.
  std::vector<std::string> type_words(CXCursor param) {
    const UserFile& f = main();
    std::vector<std::string> words;
    unsigned name_at = ctx_.pos(param).offset;
    size_t first = specifier_start(f, f.token_at(ctx_.begin(param).offset));
    static const std::set<std::string> skip = {"const", "volatile", "device", "threadgroup", "constant", "thread"};
    for (size_t i = first; i < f.tokens.size() && f.tokens[i].begin < name_at; ++i)
      if (!skip.count(f.tokens[i].text)) words.push_back(f.tokens[i].text);
    return words;
  }

  std::string declared_type(CXCursor param, const Scope& scope) {
    const UserFile& f = main();
    size_t first = specifier_start(f, f.token_at(ctx_.begin(param).offset));
    return render(f.tokens[first].begin, ctx_.pos(param).offset, scope);
  }

  // Explicit template arguments of the call (`tg_sum<TG>(...)`), as rendered text.
  std::vector<std::string> explicit_args(CXCursor call, const std::string& name, const Scope& caller) {
    const UserFile& f = main();
    auto [b, e] = range_of(call, false);
    size_t i = f.token_at(b);
    while (i < f.tokens.size() && f.tokens[i].text != name) ++i;
    std::vector<std::string> args;
    if (i + 1 >= f.tokens.size() || f.tokens[i + 1].text != "<") return args;
    int depth = 0;
    unsigned start = f.tokens[i + 2].begin;
    for (size_t j = i + 1; j < f.tokens.size() && f.tokens[j].end <= e; ++j) {
      const std::string& t = f.tokens[j].text;
      if (t == "<" || t == "(" || t == "[") ++depth;
      if (t == ">" || t == ")" || t == "]" || t == ">>") depth -= t == ">>" ? 2 : 1;
      if ((t == "," && depth == 1) || depth <= 0) {
        args.push_back(render(start, f.tokens[j].begin, caller));
        if (depth <= 0) break;
        start = f.tokens[j + 1].begin;
      }
    }
    return args;
  }

  void template_aliases(CXCursor call, CXCursor def, const std::vector<CXCursor>& tparams,
                        const std::vector<CXCursor>& params, const Scope& scope, const Scope& caller, int line) {
    std::vector<std::string> given = explicit_args(call, spelling(def), caller);
    for (size_t i = 0; i < tparams.size(); ++i) {
      const std::string alias = scope.rename(spelling(tparams[i]));
      const bool type = clang_getCursorKind(tparams[i]) == CXCursor_TemplateTypeParameter;
      if (i < given.size()) {
        hoisted_.push_back(type ? fmt::format("using {} = {};\n", alias, given[i])
                                : fmt::format("constexpr {} {} = {};\n", rename_words(spelling(clang_getCursorType(tparams[i])), scope),
                                              alias, given[i]));
        continue;
      }
      if (!type) throw Refusal{fmt::format("the template parameter `{}` of `{}` is not given", spelling(tparams[i]), spelling(def)), line};
      hoisted_.push_back(fmt::format("using {} = {};\n", alias, deduced(call, tparams[i], params, caller, line)));
    }
  }

  // A type parameter deduced from the first parameter declared `P`, `P*` or `P&`.
  std::string deduced(CXCursor call, CXCursor tparam, const std::vector<CXCursor>& params, const Scope& caller, int line) {
    const std::string p = spelling(tparam);
    for (size_t i = 0; i < params.size() && int(i) < clang_Cursor_getNumArguments(call); ++i) {
      std::vector<std::string> w = type_words(params[i]);
      if (w.empty() || w[0] != p || w.size() > 2) continue;
      std::string arg = spelling(clang_getCursorType(clang_Cursor_getArgument(call, unsigned(i))));
      if (arg.empty() || arg.find("dependent") != std::string::npos) break;
      arg = rename_words(arg, caller);
      if (w.size() == 1 || w[1] == "&") return fmt::format("std::remove_cvref_t<{}>", arg);
      if (w[1] == "*") return fmt::format("std::remove_cv_t<std::remove_pointer_t<std::remove_cvref_t<{}>>>", arg);
    }
    throw Refusal{fmt::format("cannot tell the template argument `{}` of a helper", p), line};
  }

  // Each parameter becomes a local initialised from its argument, in the caller's region.
  void bind_params(CXCursor call, const std::vector<CXCursor>& params, const Scope& scope, const Scope& caller, int line) {
    if (clang_Cursor_getNumArguments(call) != int(params.size()))
      throw Refusal{"a helper called with default arguments", line};
    for (size_t i = 0; i < params.size(); ++i) {
      std::vector<std::string> w = type_words(params[i]);
      if (std::find(w.begin(), w.end(), "&") != w.end()) throw Refusal{"a helper with a reference parameter", line};
      std::string type = declared_type(params[i], scope);
      std::string name = scope.rename(spelling(params[i]));
      std::string arg = render(clang_Cursor_getArgument(call, unsigned(i)), caller);
      Item item = make_item(Item::code, line, fmt::format("{}{} = ({});", type, name, arg));
      item.region = region_;
      item.var = add_var(name, type, false, line);
      item.name_at = unsigned(type.size());
      item.name_end = item.name_at + unsigned(name.size());
      note_uses(arg, region_);
      items_.push_back(std::move(item));
    }
  }

  // ---- writing ----

  std::string write_function(CXCursor fn, const EntryPoint& entry) {
    if (clang_getCursorKind(clang_getCursorSemanticParent(fn)) != CXCursor_TranslationUnit)
      throw Refusal{"the kernel is declared inside a namespace", line_of(fn)};
    refuse_threadgroup_variables(fn);
    CXCursor body = body_of(fn);
    if (clang_Cursor_isNull(body)) throw Refusal{"the kernel has no body", line_of(fn)};
    Scope kernel;
    flatten(body, kernel, nullptr, false);
    keep_pointed_to();
    for (int m : multi_)
      if (vars_[m].replicated) throw Refusal{"a declaration of several variables used after a barrier", vars_[m].line};
    for (const Var& v : vars_)
      if (v.replicated && (v.type.empty() || v.type.find("auto") != std::string::npos || v.type.find('&') != std::string::npos ||
                           v.type.find("dependent") != std::string::npos))
        throw Refusal{fmt::format("`{}` is used after a barrier but its type `{}` cannot be kept per thread", v.name, v.type), v.line};
    std::string out = fmt::format("\n// The loop form of `{}` (mtlgen's MSL front end, for the simulator).\n", spelling(fn));
    out += signature(fn);
    out += "{\n";
    for (const KernelParam& p : entry.params)  // the regions read each thread's builtins instead
      if (!p.name.empty()) out += fmt::format("(void){};\n", p.name);
    for (const std::string& h : hoisted_) out += h;
    for (const Var& v : vars_)
      if (v.replicated)
        out += fmt::format("auto* mtlsim_f_{} = ::mtlsim::loops::frame<{}>(mtlsim_run, {});\n", v.name, v.type,
                           v.initialised ? "false" : "true");
    out += write_segments(entry);
    out += "}\n";
    // The launchers compile their loop-form entry points only where this is defined.
    out += fmt::format("#define MTLSIM_LOOPS_{} 1\n", spelling(fn));
    return out;
  }

  // `template <...> void mtlsim_loops_k(<the kernel's parameters>, const LoopRun& mtlsim_run)`.
  std::string signature(CXCursor fn) {
    const UserFile& f = main();
    auto [b, e] = range_of(fn, false);
    size_t name_tok = f.token_at(ctx_.pos(fn).offset);
    std::string head;
    size_t i = f.token_at(b);
    if (f.tokens[i].text == "template") {
      size_t j = i + 1;
      int depth = 0;
      for (; j < f.tokens.size(); ++j) {
        if (f.tokens[j].text == "<") ++depth;
        if (f.tokens[j].text == ">") --depth;
        if (f.tokens[j].text == ">>") depth -= 2;
        if (depth <= 0) break;
      }
      head = render(f.tokens[i].begin, f.tokens[j].end, Scope{}) + "\n";
    }
    size_t open = name_tok + 1, close = open;
    int depth = 0;
    for (; close < f.tokens.size(); ++close) {
      if (f.tokens[close].text == "(") ++depth;
      if (f.tokens[close].text == ")" && --depth == 0) break;
    }
    std::string params = render(f.tokens[open].end, f.tokens[close].begin, Scope{});
    params = strip_attributes(params);
    std::string sep = params.find_first_not_of(" \t\n") == std::string::npos ? "" : ", ";
    return fmt::format("{}void mtlsim_loops_{}({}{}const ::mtlsim::detail::LoopRun& mtlsim_run)\n", head, spelling(fn), params,
                       sep);
  }

  static std::string strip_attributes(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s.compare(i, 2, "[[") == 0) {
        size_t end = s.find("]]", i);
        if (end != std::string::npos) {
          i = end + 1;
          continue;
        }
      }
      out += s[i];
    }
    return out;
  }

  // The regions between threadgroup barriers: one call of the lane-order driver
  // (mtlsim::loops::segment) per stretch, with a function of the thread per region.
  std::string write_segments(const EntryPoint& entry) {
    std::vector<int> ends;  // the last region of each stretch
    for (const Item& item : items_)
      if (item.kind == Item::sync && item.barrier) ends.push_back(item.region);
    ends.push_back(region_);
    std::string out;
    int first = 0;
    for (int last : ends) {
      out += "::mtlsim::loops::segment(mtlsim_run";
      for (int r = first; r <= last; ++r) out += ",\n[&](uint32_t mtlsim_t) {\n" + write_region(r, entry) + "}";
      out += ");\n";
      first = last + 1;
    }
    return out;
  }

  std::string write_region(int r, const EntryPoint& entry) {
    std::string out;
    for (const KernelParam& p : entry.params) {
      if (p.kind != ParamKind::builtin || p.name.empty()) continue;
      if (!p.builtin) throw Refusal{fmt::format("the builtin `{}`", p.builtin_attribute), p.loc.line};
      out += fmt::format("[[maybe_unused]] const {0} {1} = ::mtlsim::as_builtin<{0}>(::mtlsim::loops::builtin::{2}(mtlsim_run, mtlsim_t));\n",
                         p.builtin_type, p.name, ir::info(*p.builtin).attribute);
    }
    for (const Var& v : vars_)
      if (v.replicated && v.region < r) out += fmt::format("[[maybe_unused]] auto& {0} = mtlsim_f_{0}[mtlsim_t];\n", v.name);
    for (const Item& item : items_) {
      if (item.kind == Item::sync && item.region == r - 1) out += sync_result(item);
      if (item.region == r) out += write_item(item);
    }
    return out;
  }

  std::string declare(const Item& item, const std::string& type, const std::string& init) {
    const Var& v = vars_[item.target.var];
    if (!v.replicated) return fmt::format("{}{} = {};\n", type, v.name, init);
    return fmt::format("{}mtlsim_d_{} = {}; [[maybe_unused]] auto& {} = ::mtlsim::loops::keep(mtlsim_f_{}[mtlsim_t], mtlsim_d_{});\n", type,
                       v.name, init, v.name, v.name, v.name);
  }

  std::string sync_result(const Item& item) {
    std::string value = fmt::format("::mtlsim::loops::result<decltype({})>()", item.text);
    std::string out = fmt::format("#line {}\n", item.line);
    if (item.target.kind == Target::assign) return out + fmt::format("{} = {};\n", item.target.text, value);
    if (item.target.kind == Target::declare) return out + declare(item, item.target.text, value);
    return "";
  }

  std::string write_item(const Item& item) {
    std::string out = fmt::format("#line {}\n", item.line);
    switch (item.kind) {
      case Item::sync: return out + item.text + ";\n";
      case Item::result:
        if (item.target.kind == Target::assign) return out + fmt::format("{} = ({});\n", item.target.text, item.text);
        if (item.target.kind == Target::declare) return out + declare(item, item.target.text, "(" + item.text + ")");
        return out + fmt::format("(void)({});\n", item.text);
      case Item::code: break;
    }
    if (item.var < 0 || !vars_[item.var].replicated) return out + item.text + "\n";
    const Var& v = vars_[item.var];
    if (!item.has_init) return out + fmt::format("[[maybe_unused]] auto& {0} = mtlsim_f_{0}[mtlsim_t];\n", v.name);
    std::string text = item.text;
    text.replace(item.name_at, item.name_end - item.name_at, "mtlsim_d_" + v.name);
    return out + text + fmt::format(" [[maybe_unused]] auto& {0} = ::mtlsim::loops::keep(mtlsim_f_{0}[mtlsim_t], mtlsim_d_{0});\n", v.name);
  }

  Context& ctx_;
  const Description& d_;
  const std::string& original_;
  std::map<std::string, std::vector<CXCursor>> definitions_;
  std::set<std::string> other_definitions_;
  std::map<std::string, bool> syncs_;
  std::vector<Item> items_;
  std::vector<Var> vars_;
  std::map<std::string, int> var_by_name_;
  std::vector<int> multi_;
  std::vector<std::string> hoisted_;
  std::set<std::string> active_;
  int region_ = 0, helpers_ = 0, return_line_ = 0, temporaries_ = 0;
};

}  // namespace

const char* LoopForm::revision() { return kLoopFormSourceHash; }

LoopForm plan_loop_form(Context& ctx, const Description& d, const std::string& original) {
  LoopForm form;
  LoopFormWriter writer(ctx, d, original);
  std::set<std::string> done;
  for (const EntryPoint& e : d.entry_points) {
    if (!done.insert(e.function).second) continue;
    form.kernels.push_back(writer.write(e.function, e, form.text));
  }
  return form;
}

}  // namespace mtlgen::msl
