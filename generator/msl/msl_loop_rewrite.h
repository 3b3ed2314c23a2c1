#pragma once
// Internals of the loop rewrite (msl_loop_rewrite*.cpp), shared by its translation units: what the
// flattened body is made of and the writer that makes it. The files follow the writer's sections:
// msl_loop_rewrite.cpp (the source and the entry point), _flatten.cpp (analysis and flattening),
// _control.cpp (uniform loops and branches around sync points), _inline.cpp (inlining helpers) and
// _write.cpp (writing the loop form).
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "msl/msl_internal.h"

namespace mtlgen::msl::loop_form {

void visit(CXCursor c, const std::function<CXChildVisitResult(CXCursor)>& f);

std::vector<CXCursor> children(CXCursor c);

bool is_sync_builtin(const std::string& name);

bool is_function(CXCursorKind k);

// Parentheses and implicit conversions around an expression.
CXCursor strip(CXCursor c);

// Whether `word` occurs in `text` as a whole word (`static`, not `static_cast`).
bool has_word(const std::string& text, const std::string& word);

// The name a call calls; in a template, a dependent call names it only in its callee's
// OverloadedDeclRef (`tg_sum<TG>(x)`, `simd_sum(value)` with `value` of type T). "" for a cast.
std::string callee_name(CXCursor call);

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

// One top-level statement of the flattened body, or the header or closing brace of a uniform loop
// or branch around sync points (control: written between the regions, run once per threadgroup).
struct Item {
  enum Kind { code, sync, result, control } kind = code;
  int region = 0;
  int line = 0;
  std::string text;  // code: the statement; sync: the call; result: the returned expression; control: `for (...) {`, `}`
  int var = -1;      // code: the variable a one-variable declaration declares
  unsigned name_at = 0, name_end = 0;  // code: its name in `text` (a replicated one is renamed)
  bool has_init = true;
  bool barrier = false;  // sync: a threadgroup_barrier (ends a stretch the lane order runs through)
  Target target;     // sync, result
};

// Names of an inlined helper's parameters, locals and template parameters in the loop form.
struct Scope {
  std::map<std::string, std::string> renames;
  std::string rename(const std::string& s) const {
    auto it = renames.find(s);
    return it == renames.end() ? s : it->second;
  }
};

Item make_item(Item::Kind kind, int line, std::string text);

// Why a kernel has no loop form, at the line that shows it (thrown while writing).
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

  // The loop form of the kernel function `name` (appended to `text`), or why it has none.
  LoopFormKernel write(const std::string& function, const EntryPoint& entry, std::string& text);

 private:
  LoopFormKernel refuse(LoopFormKernel k, const Refusal& r);
  void reset();

  // ---- source (msl_loop_rewrite.cpp) ----
  const UserFile& main() const;
  int line_of(CXCursor c);
  void collect_definitions(CXCursor parent);
  CXCursor definition(const std::string& name);
  CXCursor body_of(CXCursor fn);
  std::pair<unsigned, unsigned> range_of(CXCursor c, bool with_semicolon);
  std::string render(unsigned begin, unsigned end, const Scope& scope, std::vector<Edit> replaced = {});
  std::string render(CXCursor c, const Scope& scope, bool with_semicolon = false);

  // ---- analysis (msl_loop_rewrite_flatten.cpp) ----
  bool contains_sync(CXCursor c);
  bool is_sync_call(const std::string& name);
  bool helper_syncs(const std::string& name);
  bool contains(CXCursor c, CXCursorKind kind);
  void refuse_threadgroup_variables(CXCursor fn);

  // ---- flattening (msl_loop_rewrite_flatten.cpp) ----
  void note_uses(const std::string& text, int region);
  int add_var(const std::string& name, const std::string& type, bool constant, int line);
  static std::string rename_words(const std::string& type, const Scope& scope);
  void flatten(CXCursor body, const Scope& scope, const Target* result, bool helper);
  void flatten(const std::vector<CXCursor>& stmts, const Scope& scope, const Target* result, bool helper);
  void code(CXCursor s, const Scope& scope);
  void declaration(CXCursor s, const Scope& scope, Item& item);
  static bool has_initializer(const std::string& after_name);
  bool extract_sync_calls(CXCursor s, const Scope& scope);
  std::string kept_type(CXCursor call, const Scope& scope);
  void declaration_of_extracted(CXCursor s, const Scope& scope, Item& item, const std::vector<Edit>& replaced);
  void sync_statement(CXCursor s, const Scope& scope);
  bool is_assignment(CXCursor lhs);
  void sync_call(CXCursor call, Target target, const Scope& scope, int line);
  void helper_return(CXCursor ret, const Scope& scope, const Target& result);
  void keep_pointed_to();

  // ---- uniform control flow (msl_loop_rewrite_control.cpp) ----
  bool control_statement(CXCursor s, const Scope& scope);
  void uniform_for(CXCursor s, const Scope& scope);
  void uniform_if(CXCursor s, const Scope& scope);
  void control_body(CXCursor body, Scope scope, const std::vector<CXCursor>& counters);
  void control(int line, std::string text);
  bool uniform(CXCursor e);
  bool uniform_reference(CXCursor ref);
  bool assigns(CXCursor body, const std::string& name);
  static bool jumps_out(CXCursor c, bool in_loop, bool in_switch);

  // ---- inlining (msl_loop_rewrite_inline.cpp) ----
  void inline_helper(CXCursor call, const std::string& name, const Target& target, const Scope& caller, int line);
  void collect_names(CXCursor def, const std::string& prefix, Scope& scope, std::vector<CXCursor>& params,
                     std::vector<CXCursor>& tparams);
  std::vector<std::string> type_words(CXCursor param);
  std::string declared_type(CXCursor param, const Scope& scope);
  std::vector<std::string> explicit_args(CXCursor call, const std::string& name, const Scope& caller);
  void template_aliases(CXCursor call, CXCursor def, const std::vector<CXCursor>& tparams,
                        const std::vector<CXCursor>& params, const Scope& scope, const Scope& caller, int line);
  std::string deduced(CXCursor call, CXCursor tparam, const std::vector<CXCursor>& params, const Scope& caller, int line);
  void bind_params(CXCursor call, const std::vector<CXCursor>& params, const Scope& scope, const Scope& caller, int line);

  // ---- writing (msl_loop_rewrite_write.cpp) ----
  std::string write_function(CXCursor fn, const EntryPoint& entry);
  std::string signature(CXCursor fn);
  static std::string strip_attributes(const std::string& s);
  std::string write_segments(const EntryPoint& entry);
  bool empty_region(int r) const;
  std::string write_region(int r, const EntryPoint& entry);
  std::string declare(const Item& item, const std::string& type, const std::string& init);
  std::string sync_result(const Item& item);
  std::string write_item(const Item& item);
  static std::string with_private_fill(const Item& item);

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
  std::vector<CXCursor> counters_;  // of the uniform loops being flattened
  int region_ = 0, helpers_ = 0, return_line_ = 0, temporaries_ = 0, blocks_ = 0;
};

}  // namespace mtlgen::msl::loop_form
