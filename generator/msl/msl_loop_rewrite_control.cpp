// Uniform loops and branches around sync points (issue 29 item 1). A `for` loop, `if` or `switch` whose
// body holds a barrier or simd function keeps its header in the loop form, run once per
// threadgroup, and its body's regions become loops over the threads inside it:
//
//   for (uint r = 0; r < ROWS; ++r) {
//     ::mtlsim::loops::segment(mtlsim_run, [&](uint32_t mtlsim_t) {...}, ...);
//   }
//
// That is only right where every thread takes the same path, so the header may read nothing that
// differs between threads: literals, template parameters, constexpr and file-scope constants,
// enumerators and the counters of enclosing uniform loops, and where the loop or branch holds a
// threadgroup barrier also the kernel's `constant` arguments and the threadgroup's builtins
// (Uniformity::threadgroup_arguments); the body may not assign a counter nor leave the loop
// (`break`, `continue`, `return`), but a kernel's branch may end in `return;`. A loop or branch that holds simd functions but no
// threadgroup barrier needs less: the same path for the lanes of each simdgroup. Its header may also
// read what is uniform per simdgroup (`j = simd_group; j < kv_len`, Uniformity), and it becomes a
// simdgroup block: one step of the stretch's lane-order driver that runs the loop once per
// simdgroup, its regions loops over that simdgroup's lanes (RegionWriter, mtlsim/msl_loops.h).
// Anything else, a loop over `local_index` for one, stays one fiber per thread, where the fiber
// path reports the threads that miss a barrier.
#include <fmt/format.h>

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

bool UniformControl::statement(CXCursor s, const Scope& scope) {
  switch (clang_getCursorKind(s)) {
    case CXCursor_ForStmt: uniform_for(s, scope); return true;
    case CXCursor_IfStmt: uniform_if(s, scope); return true;
    case CXCursor_SwitchStmt: uniform_switch(s, scope); return true;
    case CXCursor_WhileStmt:
    case CXCursor_DoStmt:
      throw Refusal{"a barrier or simd function inside a `while` or `do` loop (only `for` loops whose trip count is the same "
                    "for every thread run as loops)", src_.line_of(s)};
    default: return false;
  }
}

// `for (init; cond; inc) body` whose init declares the counters, cond and inc uniform.
void UniformControl::uniform_for(CXCursor s, const Scope& scope) {
  const UserFile& f = src_.file();
  const size_t open = f.token_at(src_.range_of(s, false).first) + 1, close = closing(f, open);
  std::vector<CXCursor> kids = children(s);
  const CXCursor body = kids.back();
  kids.pop_back();
  std::vector<CXCursor> counters;
  const auto header = [&](Uniformity::Scope_ across) {
    counters.clear();
    return uniform_header(s, kids, across, counters);
  };
  const bool leaves = Uniformity::jumps_out(body, false, false);
  bool assigned = false;
  if (!leaves && header(Uniformity::simdgroup))
    for (CXCursor c : counters) assigned = assigned || uniformity_.assigns(body, spelling(c));
  if (leaves || assigned || !choose(header, s))
    throw Refusal{"a barrier or simd function inside a loop whose trip count may differ between threads (its header reads "
                  "a value that is not the same for every thread, or for every thread of a simdgroup where the loop holds "
                  "only simd functions, or its body changes the counter or leaves the loop)", src_.line_of(s)};
  const bool simd = simd_depth_ > 0;
  Scope inner = scope;
  for (CXCursor c : counters) inner.renames[spelling(c)] = fmt::format("mtlsim_b{}_{}", ++blocks_, scope.rename(spelling(c)));
  body_.control(src_.line_of(s), "for (" + src_.render(f.tokens[open].end, f.tokens[close].begin, inner) + ") {", simd);
  control_body(body, inner, counters);
  body_.control(src_.line_of(s), "}", simd);
  if (simd) leave();
}

bool UniformControl::uniform_header(CXCursor s, const std::vector<CXCursor>& kids, Uniformity::Scope_ across,
                                    std::vector<CXCursor>& counters) {
  const UserFile& f = src_.file();
  const size_t open = f.token_at(src_.range_of(s, false).first) + 1;
  size_t first = 0;
  if (f.tokens[open + 1].text != ";") {  // the init: it must declare the counters
    if (kids.empty() || clang_getCursorKind(kids[0]) != CXCursor_DeclStmt) return false;
    for (CXCursor v : children(kids[first++])) {
      std::vector<CXCursor> init = children(v);
      if (clang_getCursorKind(v) != CXCursor_VarDecl || (!init.empty() && !uniformity_.uniform(init.back(), across))) return false;
      counters.push_back(v);
    }
  }
  uniformity_.push_counters(counters);
  bool ok = true;
  for (size_t i = first; i < kids.size(); ++i)  // the condition and the increment
    ok = ok && clang_isExpression(clang_getCursorKind(kids[i])) && uniformity_.uniform(kids[i], across);
  uniformity_.pop_counters(counters.size());
  return ok;
}

// Threadgroup-wide where the header is uniform across the threadgroup (and no simdgroup block
// encloses it), by the strict rules, or by the kernel's arguments where it holds a threadgroup
// barrier; else a simdgroup block (entered here) where it is uniform per simdgroup (closer to the
// fibers than a header all threads wait at: a simdgroup runs it as it gets there). A barrier inside
// a simdgroup block is refused when it is flattened (Flattener::sync_call).
bool UniformControl::choose(const std::function<bool(Uniformity::Scope_)>& header_uniform, CXCursor s) {
  return choose(header_uniform, src_.range_of(s, false), holds_barrier(s, 0));
}

// `range`: the statement's (a simdgroup block's, once entered); `barrier`: it reaches a threadgroup barrier.
bool UniformControl::choose(const std::function<bool(Uniformity::Scope_)>& header_uniform, std::pair<unsigned, unsigned> range,
                            bool barrier) {
  if (simd_depth_ == 0 && header_uniform(Uniformity::threadgroup)) return true;
  if (simd_depth_ == 0 && barrier && header_uniform(Uniformity::threadgroup_arguments)) return true;
  if (!header_uniform(Uniformity::simdgroup)) return false;
  if (simd_depth_++ == 0) uniformity_.set_block(range);
  return true;
}

// Whether `c` reaches a threadgroup barrier, itself or through a helper of the kernel's file.
bool UniformControl::holds_barrier(CXCursor c, int depth) const {
  bool found = false;
  visit(c, [&](CXCursor x) {
    if (clang_getCursorKind(x) == CXCursor_CallExpr) {
      const std::string name = callee_name(x);
      if (name == "threadgroup_barrier") found = true;
      else if (depth < 8 && src_.defined_here(name))
        for (CXCursor def : src_.definitions(name)) found = found || holds_barrier(def, depth + 1);
    }
    return found ? CXChildVisit_Break : CXChildVisit_Recurse;
  });
  return found;
}

void UniformControl::leave() {
  if (--simd_depth_ == 0) uniformity_.set_block({0, 0});
}

// `if (cond) A else B` with a uniform condition. A branch of a kernel's threadgroup-wide `if` may
// end in `return;` (ggml's argmax: `if (ntg > N_SIMDWIDTH) { ...; return; }`): every thread takes
// it alike, so the loop form returns after the branch's last region (a `return` nested in that
// region ends the thread's region loop there); the threads that reach a sync point after the `if`
// are those that did not take it, so the branch's returns do not count against it.
void UniformControl::uniform_if(CXCursor s, const Scope& scope) {
  std::vector<CXCursor> kids = children(s);
  const CXCursor cond = kids[0];
  const auto header = [&](Uniformity::Scope_ across) { return uniformity_.uniform(cond, across); };
  const bool kernel_wide = simd_depth_ == 0 && !flattener_.in_helper();
  std::vector<bool> returns(kids.size(), false);
  bool leaves = false, any_return = false;
  for (size_t k = 1; k < kids.size(); ++k) {
    returns[k] = kernel_wide && ends_in_return(kids[k]);
    any_return = any_return || returns[k];
    leaves = leaves || Uniformity::jumps_out(kids[k], false, false, !returns[k]);
  }
  if (kids.size() < 2 || !clang_isExpression(clang_getCursorKind(cond)) || leaves ||
      (any_return ? !header(Uniformity::threadgroup_arguments) : !choose(header, s)))
    throw Refusal{"a barrier or simd function inside a branch whose condition may differ between threads (or between the "
                  "threads of a simdgroup, where the branch holds only simd functions), or that leaves the loop or kernel",
                  src_.line_of(s)};
  const bool simd = simd_depth_ > 0;
  body_.control(src_.line_of(s), "if (" + src_.render(cond, scope) + ") {", simd);
  branch(kids[1], scope, returns[1]);
  if (kids.size() > 2) {
    body_.control(src_.line_of(kids[2]), std::string(returns[1] ? "return;\n" : "") + "} else {", simd);
    branch(kids[2], scope, returns[2]);
  }
  body_.control(src_.line_of(s), std::string(returns.back() ? "return;\n" : "") + "}", simd);
  if (simd) leave();
}

// `if (cond) return;` in a helper whose rest reaches sync points (qmv_impl's
// `if (out_row >= out_vec_size) return;`, the same in each simdgroup): the rest is flattened as the
// branch `if (!(cond)) { rest }`, which every thread of the threadgroup (or simdgroup) takes alike.
// The same for the kernel's own `if (cond) return;` where its rest runs to the kernel's end (MLX's
// arg_reduce: `if (simd_group_id != 0) return;` before simdgroup 0's last shuffles): a simdgroup
// (or threadgroup) that returns skips the rest alike, so it takes no part in the rest's simd
// functions; a threadgroup barrier in the rest of a per-simdgroup guard is refused (the fiber path
// reports the threads that miss it). False where the condition is not uniform (nothing flattened).
bool UniformControl::guard(CXCursor s, const std::vector<CXCursor>& rest, const Scope& scope) {
  const CXCursor cond = children(s)[0];
  const auto header = [&](Uniformity::Scope_ across) { return uniformity_.uniform(cond, across); };
  bool barrier = false;
  for (CXCursor r : rest) barrier = barrier || holds_barrier(r, 0);
  if (!clang_isExpression(clang_getCursorKind(cond)) ||
      !choose(header, {src_.range_of(s, false).first, src_.range_of(rest.back(), false).second}, barrier))
    return false;
  const bool simd = simd_depth_ > 0;
  body_.control(src_.line_of(s), "if (!(" + src_.render(cond, scope) + ")) {", simd);
  control_body(rest, scope, {});
  body_.control(src_.line_of(s), "}", simd);
  if (simd) leave();
  return true;
}

// Whether `s` is `if (cond) return;` (or `{ return; }`), with no `else`.
bool UniformControl::early_return(CXCursor s) {
  if (clang_getCursorKind(s) != CXCursor_IfStmt) return false;
  const std::vector<CXCursor> kids = children(s);
  if (kids.size() != 2) return false;
  CXCursor then = kids[1];
  if (clang_getCursorKind(then) == CXCursor_CompoundStmt) {
    const std::vector<CXCursor> stmts = children(then);
    if (stmts.size() != 1) return false;
    then = stmts[0];
  }
  return clang_getCursorKind(then) == CXCursor_ReturnStmt && children(then).empty();
}

// Whether `body` is a block whose last statement is `return;`.
bool UniformControl::ends_in_return(CXCursor body) {
  if (clang_getCursorKind(body) != CXCursor_CompoundStmt) return false;
  const std::vector<CXCursor> stmts = children(body);
  return !stmts.empty() && clang_getCursorKind(stmts.back()) == CXCursor_ReturnStmt && children(stmts.back()).empty();
}

// One branch of a uniform `if`; `returns`: it ends in `return;`, which the loop form's control
// writes (UniformControl::uniform_if), and its returns count against no later sync point.
void UniformControl::branch(CXCursor body, const Scope& scope, bool returns) {
  if (!returns) return control_body(body, scope, {});
  const int returned = flattener_.return_line();
  std::vector<CXCursor> stmts = children(body);
  stmts.pop_back();
  control_body(stmts, scope, {});
  flattener_.set_return_line(returned);
}

// `switch (cond) { case A: ... break; ... default: ... }` with a uniform condition (affine_matvec's
// `switch (bits)` over `params.bits`): each case becomes a braced case of its own ending in `break`;
// a case that falls into the next, or a jump out of the switch, is refused.
void UniformControl::uniform_switch(CXCursor s, const Scope& scope) {
  const auto refusal = [&] {
    return Refusal{"a barrier or simd function inside a `switch` whose condition may differ between threads, or whose "
                   "cases fall through or leave it", src_.line_of(s)};
  };
  std::vector<CXCursor> kids = children(s);
  if (kids.size() != 2 || !clang_isExpression(clang_getCursorKind(kids[0])) ||
      clang_getCursorKind(kids[1]) != CXCursor_CompoundStmt)
    throw refusal();
  struct Case {
    std::string labels;
    int line = 0;
    std::vector<CXCursor> stmts;
  };
  std::vector<Case> cases;
  const auto is_label = [](CXCursor x) {
    return clang_getCursorKind(x) == CXCursor_CaseStmt || clang_getCursorKind(x) == CXCursor_DefaultStmt;
  };
  for (CXCursor x : children(kids[1])) {
    if (is_label(x)) cases.push_back({"", src_.line_of(x), {}});
    else if (cases.empty()) throw refusal();
    for (; is_label(x); x = children(x).back())  // `case 1: case 2:` nest
      cases.back().labels += clang_getCursorKind(x) == CXCursor_DefaultStmt ? "default: "
                                                                            : "case " + src_.render(children(x).front(), scope) + ": ";
    cases.back().stmts.push_back(x);
  }
  for (size_t i = 0; i < cases.size(); ++i) {
    std::vector<CXCursor>& stmts = cases[i].stmts;
    if (!stmts.empty() && clang_getCursorKind(stmts.back()) == CXCursor_BreakStmt) stmts.pop_back();
    else if (i + 1 != cases.size()) throw refusal();
    for (CXCursor st : stmts)
      if (Uniformity::jumps_out(st, false, false)) throw refusal();
  }
  const auto header = [&](Uniformity::Scope_ across) { return uniformity_.uniform(kids[0], across); };
  if (!choose(header, s)) throw refusal();
  const bool simd = simd_depth_ > 0;
  body_.control(src_.line_of(s), "switch (" + src_.render(kids[0], scope) + ") {", simd);
  for (const Case& c : cases) {
    body_.control(c.line, c.labels + "{", simd);
    control_body(c.stmts, scope, {});
    body_.control(c.line, "} break;", simd);
  }
  body_.control(src_.line_of(s), "}", simd);
  if (simd) leave();
}

// The body's own declarations get fresh names: a region binds a kept value by its name, and two
// loops may each declare `other`.
void UniformControl::control_body(CXCursor body, Scope scope, const std::vector<CXCursor>& counters) {
  const bool block = clang_getCursorKind(body) == CXCursor_CompoundStmt;
  control_body(block ? children(body) : std::vector<CXCursor>{body}, std::move(scope), counters);
}

void UniformControl::control_body(const std::vector<CXCursor>& stmts, Scope scope, const std::vector<CXCursor>& counters) {
  for (CXCursor st : stmts)
    if (clang_getCursorKind(st) == CXCursor_DeclStmt)
      for (CXCursor v : children(st))
        scope.renames[spelling(v)] = fmt::format("mtlsim_b{}_{}", ++blocks_, scope.rename(spelling(v)));
  uniformity_.push_counters(counters);
  flattener_.flatten(stmts, scope, nullptr, false);
  uniformity_.pop_counters(counters.size());
}

}  // namespace mtlgen::msl::loop_form
