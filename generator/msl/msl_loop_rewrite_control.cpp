// Uniform loops and branches around sync points (issue 29 item 1). A `for` loop or an `if` whose
// body holds a barrier or simd function keeps its header in the loop form, run once per
// threadgroup, and its body's regions become loops over the threads inside it:
//
//   for (uint r = 0; r < ROWS; ++r) {
//     ::mtlsim::loops::segment(mtlsim_run, [&](uint32_t mtlsim_t) {...}, ...);
//   }
//
// That is only right where every thread takes the same path, so the header may read nothing that
// differs between threads: literals, template parameters, constexpr and file-scope constants,
// enumerators and the counters of enclosing uniform loops; the body may not assign a counter nor
// leave the loop (`break`, `continue`, `return`). Anything else, a loop over `local_index` for one,
// stays one fiber per thread, where the fiber path reports the threads that miss a barrier.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "msl/msl_loop_rewrite.h"

namespace mtlgen::msl::loop_form {

namespace {

// The token of `f` that closes the bracket opened at token `open`.
size_t closing(const UserFile& f, size_t open) {
  int depth = 0;
  for (size_t i = open; i < f.tokens.size(); ++i) {
    const std::string& t = f.tokens[i].text;
    if (t == "(" || t == "[" || t == "{") ++depth;
    if ((t == ")" || t == "]" || t == "}") && --depth == 0) return i;
  }
  return f.tokens.size();
}

}  // namespace

bool LoopFormWriter::control_statement(CXCursor s, const Scope& scope) {
  switch (clang_getCursorKind(s)) {
    case CXCursor_ForStmt: uniform_for(s, scope); return true;
    case CXCursor_IfStmt: uniform_if(s, scope); return true;
    case CXCursor_WhileStmt:
    case CXCursor_DoStmt:
      throw Refusal{"a barrier or simd function inside a `while` or `do` loop (only `for` loops whose trip count is the same "
                    "for every thread run as loops)", line_of(s)};
    default: return false;
  }
}

// `for (init; cond; inc) body` whose init declares the counters, cond and inc uniform.
void LoopFormWriter::uniform_for(CXCursor s, const Scope& scope) {
  const UserFile& f = main();
  const size_t open = f.token_at(range_of(s, false).first) + 1, close = closing(f, open);
  std::vector<CXCursor> kids = children(s);
  const CXCursor body = kids.back();
  kids.pop_back();
  const auto non_uniform = [&] {
    return Refusal{"a barrier or simd function inside a loop whose trip count may differ between threads (its header reads "
                   "a value that is not the same for every thread, or its body changes the counter or leaves the loop)",
                   line_of(s)};
  };
  std::vector<CXCursor> counters;
  size_t first = 0;
  if (f.tokens[open + 1].text != ";") {  // the init: it must declare the counters
    if (kids.empty() || clang_getCursorKind(kids[0]) != CXCursor_DeclStmt) throw non_uniform();
    for (CXCursor v : children(kids[first++])) {
      std::vector<CXCursor> init = children(v);
      if (clang_getCursorKind(v) != CXCursor_VarDecl || (!init.empty() && !uniform(init.back()))) throw non_uniform();
      counters.push_back(v);
    }
  }
  counters_.insert(counters_.end(), counters.begin(), counters.end());
  bool ok = true;
  for (size_t i = first; i < kids.size(); ++i)  // the condition and the increment
    ok = ok && clang_isExpression(clang_getCursorKind(kids[i])) && uniform(kids[i]);
  counters_.resize(counters_.size() - counters.size());
  if (!ok) throw non_uniform();
  for (CXCursor c : counters)
    if (assigns(body, spelling(c))) throw non_uniform();
  if (jumps_out(body, false, false)) throw non_uniform();
  Scope inner = scope;
  for (CXCursor c : counters) inner.renames[spelling(c)] = fmt::format("mtlsim_b{}_{}", ++blocks_, scope.rename(spelling(c)));
  control(line_of(s), "for (" + render(f.tokens[open].end, f.tokens[close].begin, inner) + ") {");
  control_body(body, inner, counters);
  control(line_of(s), "}");
}

// `if (cond) A else B` with a uniform condition.
void LoopFormWriter::uniform_if(CXCursor s, const Scope& scope) {
  std::vector<CXCursor> kids = children(s);
  const CXCursor cond = kids[0];
  if (kids.size() < 2 || !clang_isExpression(clang_getCursorKind(cond)) || !uniform(cond) || jumps_out(s, false, false))
    throw Refusal{"a barrier or simd function inside a branch whose condition may differ between threads (or that leaves "
                  "the loop or kernel)", line_of(s)};
  control(line_of(s), "if (" + render(cond, scope) + ") {");
  control_body(kids[1], scope, {});
  if (kids.size() > 2) {
    control(line_of(kids[2]), "} else {");
    control_body(kids[2], scope, {});
  }
  control(line_of(s), "}");
}

// The body's own declarations get fresh names: a region binds a kept value by its name, and two
// loops may each declare `other`.
void LoopFormWriter::control_body(CXCursor body, Scope scope, const std::vector<CXCursor>& counters) {
  const bool block = clang_getCursorKind(body) == CXCursor_CompoundStmt;
  std::vector<CXCursor> stmts = block ? children(body) : std::vector<CXCursor>{body};
  for (CXCursor st : stmts)
    if (clang_getCursorKind(st) == CXCursor_DeclStmt)
      for (CXCursor v : children(st))
        scope.renames[spelling(v)] = fmt::format("mtlsim_b{}_{}", ++blocks_, scope.rename(spelling(v)));
  counters_.insert(counters_.end(), counters.begin(), counters.end());
  flatten(stmts, scope, nullptr, false);
  counters_.resize(counters_.size() - counters.size());
}

// A control item ends the region before it and starts a new one after it.
void LoopFormWriter::control(int line, std::string text) {
  ++region_;
  Item item = make_item(Item::control, line, std::move(text));
  item.region = region_;
  items_.push_back(std::move(item));
}

// Whether the expression reads only what every thread of the threadgroup sees alike.
bool LoopFormWriter::uniform(CXCursor e) {
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

bool LoopFormWriter::uniform_reference(CXCursor ref) {
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
  FilePos at = ctx_.begin(d);
  if (!at.file) return false;
  for (size_t i = at.file->token_at(at.offset); i < at.file->tokens.size() && at.file->tokens[i].begin < ctx_.pos(d).offset; ++i)
    if (at.file->tokens[i].text == "constexpr") return true;
  return false;
}

// Whether `body` assigns `name`, increments it or takes its address.
bool LoopFormWriter::assigns(CXCursor body, const std::string& name) {
  static const std::set<std::string> writes = {"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^=", "++", "--"};
  const UserFile& f = main();
  auto [b, e] = range_of(body, false);
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
bool LoopFormWriter::jumps_out(CXCursor c, bool in_loop, bool in_switch) {
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
