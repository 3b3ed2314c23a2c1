#pragma once
// The validated, immutable IR of one kernel spec. Built only by the spec front end
// (generator/spec); emitters, the simulator and the packager read it and never see YAML.
// Every node keeps the location of the YAML that defined it.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "expr/expr.h"
#include "ir/builtins.h"
#include "ir/loop_form.h"
#include "ir/names.h"
#include "ir/types.h"
#include "support/diagnostics.h"

namespace mtlgen::ir {

using support::SourceLoc;

// An element type: a concrete scalar type, or a type parameter instantiated per variant.
struct TypeRef {
  std::optional<ScalarType> concrete;
  std::string param;  // set when !concrete
  SourceLoc loc;

  ScalarType resolve(const std::map<std::string, ScalarType>& types) const {
    return concrete ? *concrete : types.at(param);
  }
};

struct TypeParam {
  std::string name;
  std::vector<ScalarType> types;
  SourceLoc loc;
};

struct Dim {
  std::string name;
  int64_t min = 1;
  std::optional<int64_t> max;
  int64_t multiple_of = 1;
  std::string doc;
  SourceLoc loc;
};

struct Precondition {
  expr::Expr check;
  std::string message;  // the spec's wording; every target reports it verbatim
  SourceLoc loc;
  // Mentions a tunable or sizeof(type parameter): a property of each variant, checked with the
  // chosen tuning (never by the reference alone, which has no tuning).
  bool per_variant = false;
};

struct Tunable {
  std::string name;
  std::vector<int64_t> values;
  int64_t default_value = 0;
  std::string doc;
  SourceLoc loc;
  SourceLoc default_loc;
};

// One field of a block layout (`qs: int8[32]`).
struct BlockField {
  std::string name;
  ScalarType type = ScalarType::u8;
  int64_t count = 1;    // array length; 1 for a scalar field
  uint64_t offset = 0;  // bytes from the block's start, as Metal lays out the struct
  SourceLoc loc;
};

// The layout of one block of a packed format (`blocks: {q8_0: {d: half, qs: "int8[32]"}}`), stored
// in a `bytes` buffer that names it: fields in order, each aligned to its scalar size, the block
// padded to its largest alignment, as Metal lays out the equivalent struct.
struct BlockLayout {
  std::string name;
  std::vector<BlockField> fields;
  uint64_t size = 0;
  uint64_t align = 1;
  SourceLoc loc;

  const BlockField* field(const std::string& n) const {
    for (const auto& f : fields) if (f.name == n) return &f;
    return nullptr;
  }
};

enum class Access { read, write, read_write };
const char* to_string(Access a);

struct Buffer {
  std::string name;
  TypeRef type;
  std::vector<expr::Expr> shape;  // element counts per axis, outermost first
  Access access = Access::read;
  bool host_visible = true;       // Shared storage; false = Private (GPU-only)
  int index = -1;                 // [[buffer(index)]]; -1 until assigned
  bool explicit_index = false;
  bool explicit_access = false;  // hand-written kernels infer access from the source when absent
  SourceLoc index_loc;
  std::string block;              // a `bytes` buffer of blocks: the BlockLayout's name; "" otherwise
  SourceLoc block_loc;
  uint64_t alignment = 0;         // bytes the kernel needs its offset aligned to; 0: the element size
  SourceLoc alignment_loc;
  // A kernel family's scratch buffer: GPU-only (Private storage), written and read by the family's
  // dispatches, never seen by the host or the family's reference.
  bool intermediate = false;
  std::string doc;
  SourceLoc loc;

  bool is_output() const { return access != Access::read; }
  // The caller's input: read (or read_write) and no family intermediate. Tests fill exactly these.
  bool is_host_input() const { return access != Access::write && !intermediate; }
  // The caller's output: written (or read_write) and no family intermediate. Verify compares these.
  bool is_host_output() const { return is_output() && !intermediate; }
  // Elements the shape holds for a problem (`env` from Kernel::env_for); a negative extent counts
  // as 0. Throws expr::EvalError.
  int64_t elements(const expr::Env& env) const;
};

// Passed by value in the kernel's parameter struct (setBytes). 4-byte types only, so the struct
// layout is identical in MSL, C++ and Objective-C++.
struct Scalar {
  std::string name;
  ScalarType type = ScalarType::f32;
  double default_value = 0;
  std::string doc;
  SourceLoc loc;
};

// `constant T name [[function_constant(index)]]`: fixed when the host creates the pipeline. The
// reference receives the same values (FunctionConstants in <kernel>_types.h); test cases may set them.
struct FunctionConstant {
  std::string name;
  ScalarType type = ScalarType::boolean;
  int64_t index = 0;
  double default_value = 0;  // bool: 0 or 1
  std::string doc;
  SourceLoc loc;
  SourceLoc index_loc;
  SourceLoc default_loc;
};

// Passed as a `threadgroup T*` parameter; the host sets its length from `count`, which may only
// depend on tunables and sizeof(), so its size is known for every variant.
struct ThreadgroupArray {
  std::string name;
  TypeRef type;
  expr::Expr count;
  int index = 0;  // [[threadgroup(index)]]
  SourceLoc loc;
};

// A `threadgroup` array or variable the body declares, MLX's way (`threadgroup float
// partials[TG / SIMD_SIZE];`): static in the kernel, so the host sets no length for it, but it
// takes threadgroup memory beside the arrays. Its extents use tunables, SIMD_SIZE and sizeof only,
// so its size is known for every variant.
struct BodyThreadgroupVariable {
  std::string name;
  TypeRef type;                     // the element's scalar type, or a type parameter
  int lanes = 1;                    // float4: 4; a 3-vector takes 4, as Metal lays it out
  std::vector<expr::Expr> extents;  // outermost first; none for a single variable
  SourceLoc loc;                    // of `threadgroup`
};

struct Dispatch {
  std::vector<expr::Expr> threadgroups;             // threadgroups per grid, 1..3 axes
  std::vector<expr::Expr> threads_per_threadgroup;  // same rank
  // Threads per threadgroup that depend on the dims (chosen at encode time, as MLX and ggml do)
  // have a declared maximum, an expression of tunables: the kernel's
  // max_total_threads_per_threadgroup and what its pipelines are checked against.
  std::optional<expr::Expr> max_threads;
  bool threads_from_dims = false;  // derived: threads_per_threadgroup mentions a dim
  SourceLoc loc;

  int rank() const { return static_cast<int>(threadgroups.size()); }
};

struct CodeBlock {
  std::string text;
  SourceLoc loc;  // line of the first line of `text`
};

// Code a spec keeps in a file of its own folder (`reference_include: file.inc`), so that several
// specs state it once: the path as written and where; `code` is the file's text, located at line 1
// of the file itself (the front end reads it; empty until then).
struct IncludedCode {
  std::string path;
  SourceLoc path_loc;
  CodeBlock code;
  bool present() const { return !path.empty(); }
};

// A named quantity of the cost model beyond bytes and flops (`cost: extra:`), such as the bytes a
// backward pass keeps for checkpoints against those a full state history would take.
struct CostQuantity {
  std::string name;
  expr::Expr value;
  std::string doc;
  SourceLoc loc;  // the name
};

struct Cost {
  std::optional<expr::Expr> bytes_read;
  std::optional<expr::Expr> bytes_written;
  std::optional<expr::Expr> flops;
  std::vector<CostQuantity> extra;  // spec order

  // Every formula present: bytes_read, bytes_written, flops, then the extras.
  std::vector<const expr::Expr*> formulas() const {
    std::vector<const expr::Expr*> all;
    for (const auto* c : {&bytes_read, &bytes_written, &flops}) {
      if (*c) all.push_back(&**c);
    }
    for (const auto& q : extra) all.push_back(&q.value);
    return all;
  }
};

struct Tolerance {
  std::optional<double> max_abs;
  std::optional<double> max_rel;
  std::optional<double> nmse;
  bool exact = false;
  std::optional<double> peak_rel;  // |got - want| <= peak_rel * max |want| of the buffer
};

enum class Distribution { normal, uniform, constant, choice, iota, bits };
const char* to_string(Distribution d);

struct InputFill {
  Distribution dist = Distribution::normal;
  double a = 0;                // normal: mean; uniform: min; constant: value; iota: start
  double b = 1;                // normal: stddev; uniform: max; iota: step
  std::vector<double> values;  // choice
  double nan_fraction = 0;     // share of elements replaced by NaN / +inf / -inf after the fill
  double inf_fraction = 0;
  double neg_inf_fraction = 0;
  std::map<int64_t, double> set;  // flat index -> value, applied last (edge cases: one finite value)
  // A buffer of blocks: a fill per field (fields not named get the plan's default fill); the
  // fill's own distribution is then unused.
  std::vector<struct FieldFill> fields;
  bool explicit_dist = false;     // `dist:` written (else the plan's default, or random bytes for `bytes`)
  SourceLoc loc;
};

struct FieldFill {
  std::string field;
  InputFill fill;
  SourceLoc loc;
};

// The values a test runs a function constant at: one, or several (the case runs once per value).
struct ConstantValues {
  std::vector<double> values;      // bool: 0 or 1
  std::vector<SourceLoc> value_locs;
  SourceLoc loc;                   // of the constant's name
};

struct TestCase {
  std::string name;
  std::map<std::string, int64_t> dims;
  std::map<std::string, InputFill> inputs;  // by buffer name; others get the plan's default
  std::map<std::string, double> scalars;
  std::map<std::string, ConstantValues> constants;  // by function constant; others as the plan says
  std::optional<uint64_t> seed;
  // A benchmark case (`benchmark: true`): checked like any case and listed for the Mac bench and
  // autotune programs, but verify runs it only when `--case` names it (a full-size shape that
  // would take minutes in the simulator).
  bool benchmark = false;
  SourceLoc loc;
};

struct TestPlan {
  std::map<ScalarType, Tolerance> tolerances;  // keyed by the element type of the outputs
  std::map<std::string, Tolerance> output_tolerances;  // by output buffer; before the type's
  InputFill default_fill;
  uint64_t seed = 1;
  std::map<std::string, ConstantValues> constants;  // for cases that do not set them; else the defaults
  std::vector<TestCase> cases;
};

enum class Helper { tg_sum, tg_max, tg_min, argmax_combine, tg_argmax };

struct HelperInfo {
  Helper helper;
  const char* name;
  const char* file;  // templates/msl/helpers/<file>
  std::vector<Helper> needs;
  std::vector<std::string> also_named;  // other identifiers the helper file defines
};
const std::vector<HelperInfo>& all_helpers();
const HelperInfo& info(Helper h);

// Function constant values, one per FunctionConstant in declaration order.
using ConstantSetting = std::vector<double>;


// One parameter of the kernel function, in declaration order: the binding table that the MSL
// emitter, the Objective-C++ glue and the simulator's launcher all follow.
struct KernelParam {
  // argument: a `constant` struct or scalar reference of a hand-written kernel, filled by the host
  // (Variant::arguments[ref]); unbound: a buffer its function constant leaves out (null).
  enum class Kind { buffer, params, threadgroup_array, builtin, argument, unbound };
  Kind kind = Kind::buffer;
  size_t ref = 0;            // index into buffers / threadgroup_arrays / Variant::arguments
  Builtin builtin = Builtin::thread_position_in_grid;
  int index = 0;             // [[buffer(i)]] / [[threadgroup(i)]]
  std::string builtin_type;  // hand-written kernels: the builtin's declared type ("ushort2")
  std::string name;          // hand-written kernels: the parameter's name in the source
  bool by_reference = false; // hand-written kernels: `constant Args& args` rather than a pointer
};

// ---- Kernels written by hand in a .metal file (`source:` instead of `body:`) ----

// One `entries:` item: an entry point of the file and the type parameters and tunables it fixes.
struct SourceEntry {
  std::string host_name;
  std::map<std::string, ScalarType> types;
  std::map<std::string, int64_t> tunables;
  SourceLoc loc;
};

// A value for a `constant` parameter of a hand-written kernel: a field of an argument struct
// (`args.ne00`) or a whole scalar reference (`eps`). Either an integer expression of dims and
// tunables, or the name of a spec scalar.
struct ArgumentValue {
  std::string target;
  std::optional<expr::Expr> integer;
  std::string scalar;
  SourceLoc loc;
};

// One entry point of a hand-written file as the simulator's kernel object calls it, from the
// file alone: its parameters by [[buffer(n)]] (kind buffer, pointers and `constant` references
// alike), [[threadgroup(n)]] (threadgroup_array) and builtin. Naming no spec, one kernel object
// serves every spec of the file.
struct SourceLauncher {
  std::string host_name;
  std::string call;                 // `rms<float, 4>`
  std::vector<KernelParam> params;  // in declaration order
};

struct SourceKernel {
  std::string path;  // as written in the spec, relative to it
  std::string file;  // as opened
  SourceLoc loc;
  struct IncludeDir {
    std::string path;  // as written under `include_dirs:` (relative to the spec), or given with -I
    SourceLoc loc;     // unknown (line 0) for a command-line -I
  };
  std::vector<IncludeDir> include_dirs;  // for #include "...", after the source's own directory
  std::vector<std::string> include_paths;  // include_dirs as opened (relative to the working directory)
  std::vector<SourceEntry> entries;
  std::vector<ArgumentValue> arguments;  // as written under `arguments:`
  std::string simulator_text;            // the file as the simulator compiles it (msl::Unit)
  // Headers the file includes, as the simulator compiles them, by the path under which a copy of
  // the tree beside the file's copy finds them (given that directory with -I): relative to the
  // file's directory, or as spelled when an include directory held them.
  std::map<std::string, std::string> simulator_headers;
  // The simulator's kernel object: every entry point of the file where it has few (all of them are
  // compiled once and shared), else the spec's entries; and the file's function constants (name,
  // type, index), which its launchers set by index.
  std::vector<SourceLauncher> launchers;
  std::vector<FunctionConstant> file_constants;
  // The loop form of each kernel function of the spec's parse, which read the file as written,
  // with its instantiations (the simulator's copy has them blanked, and `constant` respelled
  // `const`, which MLX's headers do not survive): the simulator inserts those its launchers call.
  std::vector<LoopFormKernel> loop_forms;
};

// Where one value goes in the bytes of an argument parameter (Metal layout, from the front end).
struct ArgumentSlot {
  enum class Kind { signed_int, unsigned_int, floating, boolean };
  std::string field;  // "ne00", "nb[1]", "inner.x"; "" for a scalar reference
  uint64_t offset = 0;
  int size = 4;
  Kind kind = Kind::unsigned_int;
  std::optional<expr::Expr> integer;  // the value: an integer expression, or
  std::string scalar;                 // a spec scalar
};

struct ArgumentBlob {
  std::string param;
  uint64_t bytes = 0;
  std::vector<ArgumentSlot> slots;
};

// One compiled entry point: a type for each type parameter and a value for each tunable.
struct Variant {
  std::map<std::string, ScalarType> types;
  std::map<std::string, int64_t> tunables;
  std::string entry_point;  // host_name
  // Threads per threadgroup: the evaluated shape, or, where it depends on the dims, the declared
  // maximum (total) and an empty shape (Kernel::threadgroup_shape evaluates it per problem).
  int64_t threads_per_threadgroup = 0;
  std::vector<int64_t> threadgroup_shape;
  std::vector<int64_t> threadgroup_array_bytes;       // per ThreadgroupArray, unrounded
  std::vector<int64_t> body_threadgroup_bytes;        // per BodyThreadgroupVariable, unrounded
  bool is_default_tuning = false;                     // all tunables at their defaults
  // Hand-written kernels: the function the entry point instantiates (`rms<float, 4>`), its
  // parameters bound to the spec, and the bytes of each argument parameter.
  std::string source_call;
  std::string source_host_name;  // the entry point's host name (entry_point may add a tune point)
  std::vector<KernelParam> source_params;
  std::vector<ArgumentBlob> arguments;
};

// A field of the parameter struct: every dim (uint) then every scalar.
struct ParamsField {
  std::string name;
  ScalarType type = ScalarType::u32;
  bool is_dim = true;
};

// One name of a family dispatch bound to another: a member kernel's buffer, scalar or type
// parameter (`member`) to the family's (`family`). `loc` is where it was written, else the dispatch.
struct FamilyBinding {
  std::string member;
  std::string family;
  SourceLoc loc;         // of the family's name
  SourceLoc member_loc;  // of the member's name
};

// A member dim's value at one dispatch: an expression of the family's dims (and sizeof).
struct FamilyDimBinding {
  std::string member;
  expr::Expr value;
  bool written = false;  // false: the family dim of the same name
  SourceLoc member_loc;
};

// One dispatch of a family, in order: a member kernel with every one of its dims, buffers,
// scalars and type parameters bound to the family's (those not written bind by name).
struct FamilyDispatch {
  std::string kernel;
  size_t member = 0;  // index into Family::kernels
  std::vector<FamilyDimBinding> dims;
  std::vector<FamilyBinding> buffers;  // in the member's buffer order
  std::vector<FamilyBinding> scalars;
  std::vector<FamilyBinding> types;
  SourceLoc loc;
};

struct Kernel;

// A kernel family (`kernels:` + `dispatches:`): several kernels run in order over shared
// buffers, verified end to end against the family's reference. The family is an ir::Kernel
// without a body of its own; its members are complete kernels (each also checked on its own).
// Where a family's kernel comes from: the family's own spec, or (`name: {spec: file.yaml}`)
// another spec, whose kernel the family dispatches as that spec defines, validates, emits and
// verifies it, so both share one pipeline, one simulator module and one GPU program.
struct FamilyMemberOrigin {
  std::string borrowed_spec;  // the path as written, relative to the family's spec; "" for its own
  SourceLoc loc;              // of that path
  bool borrowed() const { return !borrowed_spec.empty(); }
};

struct Family {
  std::vector<Kernel> kernels;
  std::vector<FamilyMemberOrigin> origins;  // one per entry of `kernels`
  std::vector<FamilyDispatch> dispatches;
  SourceLoc loc;  // of `kernels:`

  const Kernel& kernel_of(const FamilyDispatch& d) const { return kernels[d.member]; }
  bool borrowed(size_t member) const { return member < origins.size() && origins[member].borrowed(); }
  // The member's dims at dispatch `d`, for the family's `dims` at its variant `family_variant`.
  // Throws expr::EvalError when a value cannot be evaluated or does not fit 32 bits.
  std::map<std::string, int64_t> member_dims(const FamilyDispatch& d, const std::map<std::string, int64_t>& dims,
                                             const Variant& family_variant) const;
  // The member's type parameters at the family's variant.
  std::map<std::string, ScalarType> member_types(const FamilyDispatch& d, const Variant& family_variant) const;
  // The member's variant dispatch `d` runs, as the family's glue picks it: the one serving the
  // member's dims (member_dims) at its types. Verify plans modules and runs dispatches by it.
  const Variant& member_variant(const FamilyDispatch& d, const std::map<std::string, int64_t>& member_dims,
                                const Variant& family_variant) const;
  // The family buffer / scalar bound to the member's `name` at `d`.
  static const std::string& bound(const std::vector<FamilyBinding>& list, const std::string& member);
};

// Which of a kernel's variants a verify run covers (`--variant`).
enum class VariantSelection {
  defaults,  // each type at its default tuning (a case runs on the variant that serves it)
  each,      // every tuning once (at the first types) and every type once (at its default tuning)
  all,       // every variant
};

struct Kernel {
  std::string name;
  SourceLoc name_loc;
  std::string summary;
  std::string spec_path;  // as displayed in generated headers, '/'-separated
  std::string spec_hash;  // of the spec file bytes, and of the files it includes (reference_include)
  std::vector<TypeParam> type_params;
  // `types:` written as a list of tuples ({T: half, AccT: float}): the type combinations the
  // variants take, in order. Empty: every combination of the type parameters' lists.
  std::vector<std::map<std::string, ScalarType>> type_tuples;
  std::vector<Dim> dims;
  std::vector<Precondition> preconditions;
  std::vector<Tunable> tunables;
  std::vector<BlockLayout> blocks;
  std::vector<Buffer> buffers;
  std::vector<Scalar> scalars;
  std::vector<FunctionConstant> function_constants;
  std::vector<ThreadgroupArray> threadgroup_arrays;
  std::vector<BodyThreadgroupVariable> body_threadgroup_variables;  // derived from the body
  Dispatch dispatch;
  // File-scope code placed before the kernel: `prelude` in the .metal and (Metal's address-space
  // qualifiers defined away) in the reference; `metal_prelude` in the .metal only;
  // `reference_prelude` in the reference only. Empty text when the spec has none.
  CodeBlock prelude;
  CodeBlock metal_prelude;
  CodeBlock reference_prelude;
  CodeBlock body;
  CodeBlock reference;
  // Pasted after `reference:` in the same function (it sees the same locals and what the
  // reference declared before it).
  IncludedCode reference_include;
  Cost cost;
  TestPlan tests;

  // Derived by the front end.
  std::set<Builtin> builtins_used;
  std::set<Helper> helpers_used;   // closed under HelperInfo::needs
  std::set<std::string> params_used_in_body;  // dims and scalars the body reads
  std::vector<ParamsField> params_fields;
  int params_index = -1;           // [[buffer(i)]] of the parameter struct
  std::vector<KernelParam> params; // binding table
  std::vector<Variant> variants;   // type params x tunables, in a stable order
  std::string msl_version;         // e.g. "3.1"
  std::optional<SourceKernel> source;  // set: the MSL is a hand-written file, `body` is empty
  bool is_source() const { return source.has_value(); }
  // set: a kernel family; no body, dispatch, tunables or threadgroup memory of its own. Shared so
  // that Kernel stays copyable with Family declared before it.
  std::shared_ptr<const Family> family;
  bool is_family() const { return family != nullptr; }
  std::string family_name;  // a member of a family: the family's name; "" otherwise
  // Every name the generated files derive from the spec's (classes, selector pieces, files),
  // assigned by the front end once no collision remains.
  KernelNames names;

  const Variant& default_variant_for(const std::map<std::string, ScalarType>& types) const;
  // The variant a caller naming no tuning gets for `dims` (the generated tuning_serving): the
  // default for `types` when its per-variant preconditions accept the dims, else the variant of
  // those types that accepts them and shares the most tunable values with the default (the first
  // in variant order on a tie); the default when none does.
  const Variant& serving_variant(const std::map<std::string, int64_t>& dims,
                                 const std::map<std::string, ScalarType>& types) const;
  // The values expressions see for a problem of `dims` at `variant`: dims, tunables, and sizeof of
  // the variant's type parameters and of every concrete element type.
  static expr::Env env_for(const std::map<std::string, int64_t>& dims, const Variant& variant);
  bool has_per_variant_preconditions() const;
  // Whether a run under `selection` covers `variant`.
  bool selects(VariantSelection selection, const Variant& variant) const;
  // The variant a case of `dims` runs on when `variant` is selected: itself, but under
  // VariantSelection::defaults the one that serves the case (serving_variant).
  const Variant& variant_to_run(VariantSelection selection, const Variant& variant,
                                const std::map<std::string, int64_t>& dims) const;
  // Threads per threadgroup per axis for a problem (`env` from env_for): the variant's shape, or
  // the dispatch's expressions evaluated where they depend on the dims. Throws expr::EvalError.
  std::vector<int64_t> threadgroup_shape(const Variant& variant, const expr::Env& env) const;
  // The message of the first per-variant precondition that `dims` violate at `variant`; "" when
  // all hold. Throws expr::EvalError when a check cannot be evaluated (division by zero).
  std::string variant_violation(const std::map<std::string, int64_t>& dims, const Variant& variant) const;
  // What is wrong with `dims` for this kernel whatever the variant: a dim outside its bounds or a
  // precondition (not per variant) violated, in words; "" when they hold. Throws expr::EvalError.
  std::string dims_violation(const std::map<std::string, int64_t>& dims) const;
  // `TG=256, N_READS=8` (and `T=f32` when a per-variant precondition uses sizeof of a type
  // parameter): how messages name the variant a precondition failed at.
  std::string describe_tuning(const Variant& variant) const;
  std::string params_struct_name() const { return name + "_params"; }
  const BlockLayout* block_of(const Buffer& b) const;
  // The fill of `buffer` in `test`: the case's, else the plan's default; a `bytes` buffer without
  // a fill of its own gets random bytes (every bit pattern), not the default's numbers.
  InputFill input_fill(const TestCase& test, const std::string& buffer) const;
  const Tolerance* output_tolerance(const std::string& buffer) const;

  // Every function constant setting `test` runs at: the product over the constants of the case's
  // values, else the plan's, else the default. One (empty) setting when there are no constants.
  std::vector<ConstantSetting> constant_settings(const TestCase& test) const;
  ConstantSetting default_constants() const;
  // `use_bias=false, mode=3`; "" when there are no constants.
  std::string describe(const ConstantSetting& setting) const;
};

}  // namespace mtlgen::ir
