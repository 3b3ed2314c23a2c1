#pragma once
// Internals of the loop rewrite (msl_loop_rewrite*.cpp), shared by its translation units: what the
// flattened body is made of and the classes that make and write it, one per file:
// msl_loop_rewrite.cpp (Source, and LoopFormWriter, the entry point), _body.cpp (SyncPoints and
// FlatBody), _flatten.cpp (Flattener), _uniform.cpp (Uniformity), _control.cpp (UniformControl:
// uniform loops and branches around sync points), _inline.cpp (HelperInliner) and _write.cpp
// (RegionWriter).
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
bool is_matrix_collective(const std::string& name);

bool is_function(CXCursorKind k);

// Parentheses and implicit conversions around an expression.
CXCursor strip(CXCursor c);

// Whether `word` occurs in `text` as a whole word (`static`, not `static_cast`).
bool has_word(const std::string& text, const std::string& word);

// Calls `fn(word, member)` for each identifier token of `text` in order, `member` when it follows
// `.` or `->`; stops at the first call that returns false.
void for_each_identifier(const std::string& text, const std::function<bool(const std::string&, bool)>& fn);

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
  bool addressed = false;   // an array, or its address is taken: regions bind its frame slot itself
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
  bool simd = false;     // control: of a simdgroup block (msl_loop_rewrite_control.cpp)
  Target target;     // sync, result
  std::string guard;  // sync: compile-time checks written before the call (Flattener::builtin_guard)
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

// Identifiers of a type spelling renamed (`T` of a helper becomes its alias).
std::string rename_words(const std::string& type, const Scope& scope);

// Whether `c` is or contains a cursor of `kind`.
bool contains(CXCursor c, CXCursorKind kind);

// ---- the source (msl_loop_rewrite.cpp): the kernel's file's functions, ranges and text ----
// One user file (the main file, or a header it includes: MLX keeps its kernels there): its
// kernels and the helpers they inline must be defined in it.
struct KernelFile {
  const UserFile* file = nullptr;
  const std::string* original = nullptr;  // its text as read (the pre-pass keeps every offset)
  std::string header;                     // LoopFormKernel::header ("": the main file)
  int line_base = 0;                      // LoopFormKernel::line_base
};

class Source {
 public:
  Source(Context& ctx, const Description& d, const KernelFile& file);

  Context& ctx() const { return ctx_; }
  const std::string& original() const { return *file_.original; }
  const UserFile& file() const { return *file_.file; }
  const KernelFile& kernel_file() const { return file_; }
  int line_of(CXCursor c) const;
  // `#line` for a line of the file, as the simulator's copy numbers it.
  std::string line_directive(int line) const;
  // The one definition of `name` in the file; null when there is none or it is overloaded.
  CXCursor definition(const std::string& name) const;
  bool defined_here(const std::string& name) const { return definitions_.count(name) != 0; }
  bool defined_elsewhere(const std::string& name) const { return other_definitions_.count(name) != 0; }
  const std::vector<CXCursor>& definitions(const std::string& name) const { return definitions_.at(name); }
  // Its definitions in the other user files (a header's helpers, MLX's simd_shuffle_down overloads).
  const std::vector<CXCursor>& definitions_elsewhere(const std::string& name) const { return other_definitions_.at(name); }
  static CXCursor body_of(CXCursor fn);
  std::pair<unsigned, unsigned> range_of(CXCursor c, bool with_semicolon) const;
  std::string render(unsigned begin, unsigned end, const Scope& scope, std::vector<Edit> replaced = {}) const;
  std::string render(CXCursor c, const Scope& scope, bool with_semicolon = false) const;
  // Whether `lhs` is followed by `=`.
  bool is_assignment(CXCursor lhs) const;
  // Where `var` is a `threadgroup` variable declared in a body (Description::threadgroup_sites); null otherwise.
  const ThreadgroupSite* threadgroup_site(CXCursor var) const;
  // Every declaration of a function `name` in the user's files (any file, at namespace scope or a
  // class's friend, definitions or not).
  std::vector<CXCursor> user_declarations(const std::string& name) const;

 private:
  void collect_definitions(CXCursor parent);

  Context& ctx_;
  const Description& d_;
  KernelFile file_;
  std::map<std::string, std::vector<CXCursor>> definitions_;
  std::map<std::string, std::vector<CXCursor>> other_definitions_;
};

// ---- sync points (msl_loop_rewrite_body.cpp): which calls a region ends at ----
class SyncPoints {
 public:
  explicit SyncPoints(const Source& src) : src_(src) {}
  // Whether `c` reaches a sync point: a barrier or simd function, or a helper that does.
  bool contains_sync(CXCursor c);
  bool is_sync_call(const std::string& name);

 private:
  bool helper_syncs(const std::string& name, bool elsewhere);

  const Source& src_;
  std::map<std::pair<std::string, bool>, bool> syncs_;  // by helper (and whether defined elsewhere), for every kernel of the file
};

// ---- the flattened body (msl_loop_rewrite_body.cpp): items by region, and the values they share ----
struct FlatBody {
  std::vector<Item> items;
  std::vector<Var> vars;
  std::map<std::string, int> var_by_name;
  std::vector<int> multi;            // the last variable of each declaration of several
  std::vector<std::string> hoisted;  // constexpr locals and template aliases, at the top of the function
  int region = 0;                    // the region being filled

  int add_var(const std::string& name, const std::string& type, bool constant, int line);
  void note_uses(const std::string& text, int in_region);
  // A control item ends the region before it and starts a new one after it; `simd`: of a
  // simdgroup block (its header runs once per simdgroup, inside the stretch).
  void control(int line, std::string text, bool simd);
  void keep_pointed_to();
  // Throws where a value a later region reads cannot be kept per thread.
  void refuse_unkept() const;
};

// ---- uniformity (msl_loop_rewrite_uniform.cpp): what every thread of a threadgroup sees alike ----
// Threadgroup-wide (the strict rules: what a header run once per threadgroup, outside every
// region, may read), per simdgroup (what a simdgroup block's header, run with one lane's
// builtins and values, may read: also the simdgroup's index, the threadgroup's position and
// sizes, `constant` parameters, `const` scalar locals initialised from such values, and min, max,
// clamp and abs of them), or threadgroup-wide with the kernel's arguments (the strict rules, and
// what the loop form's parameters hold alike for every thread: `constant` parameters the body
// does not assign, the threadgroup's and grid's builtins, their members, and min, max, clamp and
// abs of them; for a loop or branch that holds a threadgroup barrier, which no simdgroup block can).
class Uniformity {
 public:
  enum Scope_ { threadgroup, simdgroup, threadgroup_arguments };
  Uniformity(const Source& src, CXCursor kernel, const EntryPoint& entry) : src_(src), kernel_(kernel), entry_(entry) {}
  bool uniform(CXCursor e, Scope_ across = threadgroup) const;
  bool assigns(CXCursor body, const std::string& name) const;
  // `returns`: whether a `return` counts.
  static bool jumps_out(CXCursor c, bool in_loop, bool in_switch, bool returns = true);
  // The counters of the uniform loops being flattened, innermost last.
  void push_counters(const std::vector<CXCursor>& counters);
  void pop_counters(size_t n) { counters_.resize(counters_.size() - n); }
  // The outermost simdgroup block being flattened (file offsets; 0, 0: none): a local declared in
  // it is not bound where its headers run.
  void set_block(std::pair<unsigned, unsigned> range) { block_ = range; }
  // A helper's parameter bound to `arg`, as a local of the loop form; `in_block`: inside a simdgroup
  // block, whose headers do not see it.
  void note_argument(CXCursor param, CXCursor arg, bool in_block) { arguments_.push_back({param, arg, in_block}); }

 private:
  bool uniform_reference(CXCursor ref, Scope_ across) const;
  bool uniform_parameter(CXCursor param, Scope_ across) const;
  bool uniform_local(CXCursor var) const;
  bool pure_function(CXCursor fn) const;
  bool pure_call(CXCursor call) const;

  const Source& src_;
  CXCursor kernel_;
  const EntryPoint& entry_;
  std::vector<CXCursor> counters_;
  std::pair<unsigned, unsigned> block_{0, 0};
  struct Argument {
    CXCursor param, arg;
    bool in_block;
  };
  std::vector<Argument> arguments_;
};

class Flattener;

// ---- uniform loops and branches around sync points (msl_loop_rewrite_control.cpp) ----
class UniformControl {
 public:
  UniformControl(Flattener& flattener, const Source& src, FlatBody& body, CXCursor kernel, const EntryPoint& entry)
      : flattener_(flattener), src_(src), body_(body), uniformity_(src, kernel, entry) {}
  // Flattens `s` where it is a `for` or `if`; false where it is neither.
  bool statement(CXCursor s, const Scope& scope);
  // Inside a simdgroup block: a threadgroup barrier there is refused.
  bool in_simdgroup_block() const { return simd_depth_ > 0; }
  // `if (cond) return;` followed by `rest`, which reaches sync points: `if (!(cond)) { rest }`;
  // false (nothing flattened) where `cond` is not uniform.
  bool guard(CXCursor s, const std::vector<CXCursor>& rest, const Scope& scope);
  static bool early_return(CXCursor s);
  // A helper's parameter bound to `arg` (HelperInliner::bind_params).
  void note_argument(CXCursor param, CXCursor arg) { uniformity_.note_argument(param, arg, simd_depth_ > 0); }

 private:
  void uniform_for(CXCursor s, const Scope& scope);
  void uniform_if(CXCursor s, const Scope& scope);
  static bool ends_in_return(CXCursor body);
  void branch(CXCursor body, const Scope& scope, bool returns);
  void uniform_switch(CXCursor s, const Scope& scope);
  // Whether the loop's init declares its counters (pushed on `counters`) and its header is uniform.
  bool uniform_header(CXCursor s, const std::vector<CXCursor>& kids, Uniformity::Scope_ across,
                      std::vector<CXCursor>& counters);
  // Which form a loop or branch takes: threadgroup-wide where its header allows, else a simdgroup
  // block where it holds no barrier; false: neither.
  bool choose(const std::function<bool(Uniformity::Scope_)>& header_uniform, CXCursor s);
  bool choose(const std::function<bool(Uniformity::Scope_)>& header_uniform, std::pair<unsigned, unsigned> range, bool barrier);
  bool holds_barrier(CXCursor c, int depth) const;
  void leave();
  void control_body(CXCursor body, Scope scope, const std::vector<CXCursor>& counters);
  void control_body(const std::vector<CXCursor>& stmts, Scope scope, const std::vector<CXCursor>& counters);

  Flattener& flattener_;
  const Source& src_;
  FlatBody& body_;
  Uniformity uniformity_;
  int blocks_ = 0;
  int simd_depth_ = 0;  // simdgroup blocks being flattened
};

// ---- inlining helpers that contain a sync point (msl_loop_rewrite_inline.cpp) ----
class HelperInliner {
 public:
  HelperInliner(Flattener& flattener, const Source& src, FlatBody& body) : flattener_(flattener), src_(src), body_(body) {}
  // `guard`: compile-time checks written before the helper's body (Flattener::overload_guard).
  void inline_helper(CXCursor call, const std::string& name, const Target& target, const Scope& caller, int line,
                     const std::string& guard = "");
  bool inlining() const { return !active_.empty(); }
  // Whether `arg`'s type, as clang spells it, is the template `def`'s first parameter's pattern
  // (`IndexValPair<T>` for `IndexValPair<U>`).
  bool pattern_matches(CXCursor def, CXCursor arg) const;

 private:
  void collect_names(CXCursor def, const std::string& prefix, Scope& scope, std::vector<CXCursor>& params,
                     std::vector<CXCursor>& tparams);
  std::vector<std::string> type_words(CXCursor param) const;
  std::string declared_type(CXCursor param, const Scope& scope) const;
  std::vector<std::string> explicit_args(CXCursor call, const std::string& name, const Scope& caller) const;
  void template_aliases(CXCursor call, CXCursor def, const std::vector<CXCursor>& tparams,
                        const std::vector<CXCursor>& params, const Scope& scope, const Scope& caller, int line);
  static std::string value_type(const std::string& given, int line);
  std::string default_argument(CXCursor tparam, const Scope& scope) const;
  std::string deduced(CXCursor call, CXCursor tparam, const std::vector<CXCursor>& params, const Scope& caller,
                      int line);
  // `X<A, B>` split into `X` and its arguments; false where `type` is not of that form.
  static bool split_template(const std::string& type, std::string& name, std::vector<std::string>& args);
  std::set<size_t> pattern_checked_;  // parameters a template argument was deduced from by pattern
  void bind_params(CXCursor call, const std::vector<CXCursor>& params, Scope& scope, const Scope& caller, int line);

  Flattener& flattener_;
  const Source& src_;
  FlatBody& body_;
  std::set<std::string> active_;  // being inlined: a recursive helper is refused
  int helpers_ = 0;
};

// ---- flattening (msl_loop_rewrite_flatten.cpp): one kernel's body as top-level items ----
class Flattener {
 public:
  Flattener(const Source& src, SyncPoints& sync, CXCursor kernel, const EntryPoint& entry)
      : src_(src), sync_(sync), control_(*this, src, body_, kernel, entry), inliner_(*this, src, body_) {}
  Flattener(const Flattener&) = delete;
  Flattener& operator=(const Flattener&) = delete;

  void flatten(CXCursor body, const Scope& scope, const Target* result, bool helper);
  void flatten(const std::vector<CXCursor>& stmts, const Scope& scope, const Target* result, bool helper);
  // The kernel's scope: its parameters that the body assigns renamed to per-thread copies.
  Scope parameter_copies(CXCursor fn, const EntryPoint& entry);
  std::set<std::string> passed_by_reference(CXCursor body) const;
  const FlatBody& body() const { return body_; }
  FlatBody& body() { return body_; }
  // The line of the first `return` flattened so far (0: none); a sync point after it is refused.
  int return_line() const { return return_line_; }
  void set_return_line(int line) { return_line_ = line; }
  // The next statements flattened run to the kernel's end (its body, or the rest after its guard).
  void set_kernel_tail() { kernel_tail_ = true; }
  bool in_helper() const { return inliner_.inlining(); }
  void note_argument(CXCursor param, CXCursor arg) { control_.note_argument(param, arg); }

 private:
  void code(CXCursor s, const Scope& scope);
  bool threadgroup_declaration(CXCursor s, const Scope& scope);
  bool type_declaration(CXCursor s, const Scope& scope);
  void declaration(CXCursor s, const Scope& scope, Item& item);
  static bool has_initializer(const std::string& after_name);
  bool extract_sync_calls(CXCursor s, const Scope& scope);
  std::string kept_type(CXCursor call, const Scope& scope) const;
  void declaration_of_extracted(CXCursor s, const Scope& scope, Item& item, const std::vector<Edit>& replaced);
  void sync_statement(CXCursor s, const Scope& scope);
  void sync_call(CXCursor call, Target target, const Scope& scope, int line);
  std::vector<Edit> extract_operands(CXCursor s, const Scope& scope);
  bool calls_the_builtin(CXCursor call) const;
  bool calls_user_template(CXCursor call, const std::string& name) const;
  std::string overload_guard(CXCursor call, const std::string& name, const Scope& scope, int line, CXCursor chosen) const;
  std::string template_probe(CXCursor tmpl) const;
  void helper_return(CXCursor ret, const Scope& scope, const Target& result);

  const Source& src_;
  SyncPoints& sync_;
  FlatBody body_;
  UniformControl control_;
  HelperInliner inliner_;
  int return_line_ = 0, temporaries_ = 0;
  bool kernel_tail_ = false;
};

// ---- writing (msl_loop_rewrite_write.cpp): the flattened body as `mtlsim_loops_<kernel>` ----
class RegionWriter {
 public:
  RegionWriter(const Source& src, const FlatBody& body) : src_(src), body_(body) {}
  std::string write_function(CXCursor fn, const EntryPoint& entry) const;

 private:
  std::string signature(CXCursor fn) const;
  static std::string strip_attributes(const std::string& s);
  std::string write_segments(const EntryPoint& entry) const;
  // The regions `from`..`to` of a stretch after its first, simdgroup blocks among them, each
  // preceded by `,`.
  std::string write_chain(int from, int to, const EntryPoint& entry) const;
  // The simdgroup block whose header starts region `r`; `next`: the region after its closing brace.
  std::string write_block(int r, const EntryPoint& entry, int& next) const;
  const Item* simd_control(int r) const;
  bool empty_region(int r) const;
  // Thread `mtlsim_t`'s builtins and the kept values declared before region `r`: bound to their
  // frame slots, or (`promoted`, by variable) copied into locals of the region.
  std::string bindings(int r, const EntryPoint& entry, const std::set<int>* promoted = nullptr) const;
  std::string write_region(int r, const EntryPoint& entry) const;
  // The kept values region `r` keeps in locals: those its text names (all or none where it names
  // a macro of the user's files, which may name one unseen), but arrays and those whose address is
  // taken, which a pointer kept for a later region may point at.
  std::set<int> promoted_in(int r, const std::string& text) const;
  // Whether a region's `text` may change the kept value `v`, which it then stores back.
  static bool may_change(const std::string& text, const Var& v);
  std::string declare(const Item& item, const std::string& type, const std::string& init, bool promoted) const;
  std::string sync_result(const Item& item, bool promoted) const;
  static std::string with_private_fill(const Item& item);
  std::string write_item(const Item& item, bool promoted) const;
  // The kept values no region changes that are copies of a kernel parameter passed by value, a
  // builtin or another such copy (an inlined helper's `lane`, `partial`): each region declares them
  // again (recomputed_, by variable: the declaration) instead of keeping them per thread.
  void find_recomputed(const EntryPoint& entry) const;
  // Whether a region after `r` may read the value kept value `i` has at the end of region `r`:
  // false where the next region to name it (with no loop or branch header between) first assigns
  // it whole, or none does. Region `r` then stores it back to no slot.
  bool live_after(int r, int i) const;

  const Source& src_;
  const FlatBody& body_;
  mutable std::map<int, std::string> recomputed_;  // filled by write_function before any region is written
};

// Each kernel of a file: flattened, then written, or refused.
class LoopFormWriter {
 public:
  LoopFormWriter(Context& ctx, const Description& d, const KernelFile& file) : source_(ctx, d, file), sync_(source_) {}

  // The loop form of the kernel function `name`, or why it has none.
  LoopFormKernel write(const std::string& function, const EntryPoint& entry);

 private:
  std::string loop_function(CXCursor fn, const EntryPoint& entry);

  Source source_;
  SyncPoints sync_;
};

}  // namespace mtlgen::msl::loop_form
