#pragma once
// The MSL front end: reads a translation unit of Metal Shading Language with libclang (a spec's
// emitted .metal and any hand-written .metal alike) and describes what the rest of mtlgen needs:
// every kernel entry point, each parameter's address space, type and binding, the Metal layout of
// argument structs, function constants, and the threadgroup variables declared in kernel bodies.
//
// How MSL becomes parseable C++ for clang (see msl_parse.cpp): the text is pre-processed with
// lengths kept (so every line and column stays the user's) — `template [[host_name("x")]]`
// becomes a GNU `annotate` attribute clang keeps on the explicit instantiation, `[[kernel]]`
// the `kernel` word — and parsed against the embedded shim <metal_stdlib> with the address-space
// words defined as empty macros; the tokens still hold them, and this front end reads them there.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ir/builtins.h"
#include "ir/loop_form.h"
#include "support/diagnostics.h"

namespace mtlgen::msl {

using support::SourceLoc;

enum class AddressSpace { none, device, constant, threadgroup, thread };
const char* to_string(AddressSpace a);  // "device", ..., "" for none

// Metal layout of a type as seen from the host (argument structs passed with setBytes/buffers).
struct FieldLayout {
  std::string name;
  std::string type;   // as spelled after instantiation, e.g. "int64_t", "packed_float3", "Inner";
                      // for an array, the element type ("uint8_t" for `uint8_t qs[16]`)
  uint64_t offset = 0;
  uint64_t size = 0;         // of the whole field (all array elements)
  uint64_t align = 1;
  uint64_t array_count = 0;  // 0: not an array; else the number of elements (all dimensions)
  std::vector<FieldLayout> fields;  // nested struct members
};

struct StructLayout {
  std::string name;
  uint64_t size = 0;
  uint64_t align = 1;
  std::vector<FieldLayout> fields;
};

enum class ParamKind {
  buffer,            // device/constant pointer or reference  [[buffer(n)]]
  threadgroup,       // threadgroup pointer                    [[threadgroup(n)]]
  builtin,           // [[thread_position_in_grid]] and friends
  texture_or_other,  // anything the simulator cannot bind (textures, samplers, stage_in): reported
};

struct KernelParam {
  std::string name;                 // may be empty for an unnamed parameter
  ParamKind kind = ParamKind::buffer;
  AddressSpace address_space = AddressSpace::none;
  std::string type;                 // full instantiated type, e.g. "const device float *"
  std::string element_type;         // pointee / referent without cv and address space: "float",
                                    // "half", "char", "Args", "block_q4_0", "atomic<float>"
  bool is_pointer = false;
  bool is_reference = false;
  bool is_const = false;            // const pointee/referent (or `constant` address space)
  int index = -1;                   // [[buffer(n)]] / [[threadgroup(n)]]; assigned by parameter
                                    // order when absent (index_explicit false)
  bool index_explicit = false;
  std::optional<ir::Builtin> builtin;
  std::string builtin_type;         // as declared: "uint", "ushort2", "uint3", ...
  std::string builtin_attribute;    // the attribute as written: "thread_position_in_grid", and
                                    // for builtins outside ir::Builtin (builtin empty):
                                    // "threads_per_simdgroup", "thread_execution_width", ...
  std::string function_constant;    // [[buffer(n), function_constant(name)]]: bound only when true
  std::optional<StructLayout> layout;  // element_type is a struct: its Metal layout
  SourceLoc loc;                    // of the parameter's name (or type when unnamed)
};

// A `threadgroup` variable declared inside a function body (or a helper it calls).
struct ThreadgroupVariable {
  std::string name;
  std::string function;             // enclosing function
  std::string type;                 // e.g. "float[32]", "float[32][33]", "T[BN * BK]"
  uint64_t bytes = 0;               // 0 when dependent on a template parameter
  SourceLoc loc;
  // Declared with an initializer (`= {0}`), which Metal does not run: threadgroup memory holds
  // what it holds until threads write it. The simulator leaves it uninitialised too.
  bool initializer = false;
};

// Line numbers of the simulator's copies of headers: the n-th header's line L is reported as
// n * kHeaderLineStride + L (n from 1), above any line a main file has.
inline constexpr int kHeaderLineStride = 1000000;
// What a header's copy starts with: `#line n*stride+1 // path` (the next line is its line 1;
// the path is a comment: the include policy refuses a `#line` that names a file).
std::string header_line_directive(int n, const std::string& path);
// The header and line that a reported line of a simulator module names, from the headers' copies
// (any order); nullopt for a line of the main file.
struct HeaderLine {
  std::string path;
  int line = 0;
};
std::optional<HeaderLine> header_line_of(int reported_line, const std::vector<std::string>& header_copies);

struct FunctionConstant {
  std::string name;
  std::string type;                 // "bool", "int", "float", "half", "uint", ...
  int index = -1;                   // [[function_constant(i)]]
  SourceLoc loc;
};

struct TemplateArg {
  std::string name;                 // template parameter name ("T"); "" when unknown
  std::string value;                // "float", "half", "4", "true"
};

struct EntryPoint {
  std::string host_name;            // name the host looks up: host_name, else the function name
  std::string function;             // the C++ function (template) name
  std::vector<TemplateArg> template_args;  // for explicit instantiations
  std::vector<KernelParam> params;  // in declaration order, instantiated
  std::optional<int> max_total_threads_per_threadgroup;  // [[max_total_threads_per_threadgroup(N)]]
  std::vector<std::string> function_constants;  // those it (or a function it calls) names, sorted
  SourceLoc loc;                    // of the instantiation (or the kernel definition)
  SourceLoc definition_loc;         // of the kernel function's name
};

struct ParseOptions {
  std::filesystem::path file;       // shown in diagnostics; also where local #includes resolve
  std::optional<std::string> text;  // contents; read from `file` when absent
  std::vector<std::filesystem::path> include_dirs;  // further directories for #include "..."
  std::string msl_version = "3.1";  // as `__METAL_VERSION__` 310 sees it
  bool conformance = true;          // run the Metal conformance checks (msl/conformance.h)
  bool require_entry_point = true;  // a file without any kernel is an error (a header is not)
  // An error stops only the kernels whose declarations it lies in (`import`): they are left out
  // of entry_points() and listed by unreadable_kernels(); errors in no kernel's declarations
  // become warnings. Otherwise every error goes to the diagnostics.
  bool errors_per_kernel = false;
  // The entry points (host names) whose kernel functions get a loop form (Unit::loop_form): a
  // simulator module writes only those it runs, so a file of a hundred kernels costs g++ one.
  // Absent: every kernel's.
  std::optional<std::set<std::string>> loop_form_entry_points;
  // The entry points (host names) a caller needs (a spec's `entries:`): the explicit
  // instantiations that declare none of them, on lines of their own, are left out of the parse
  // (found first by a parse that skips function bodies), and the simulator's copy lists them with
  // those it drops anyway. ggml's 600 instantiations are most of its parse. Absent: all are read.
  std::optional<std::set<std::string>> needed_entry_points;
  // With needed_entry_points: a file whose droppable instantiations declare at most this many
  // host names is read whole all the same, so that its Unit lists every entry point (a simulator
  // kernel object holding them all then serves every spec of the file). 0: never.
  size_t read_whole_up_to = 0;
};

// A kernel function the front end could not read (ParseOptions::errors_per_kernel), with every
// entry point of it and the errors in what it depends on.
struct UnreadableKernel {
  std::string function;
  std::vector<std::string> host_names;
  SourceLoc loc;  // of the kernel function's name
  std::vector<support::Diagnostic> reasons;
  std::string summary() const;  // "kernel `f` (2 entries: a, b) could not be read: 3 errors"
};

// The loop form of the kernels (msl_loop_rewrite.cpp, issue 17 item 2): a function per kernel
// function that runs a whole threadgroup, each barrier-free region as a loop over its threads,
// where the front end can prove the structure; the simulator runs the rest as fibers.
using ir::LoopFormKernel;
struct LoopForm {
  // Part of the key of every simulator module (its other inputs do not show what the rewrite
  // writes): a hash of msl_loop_rewrite.cpp and what it builds on, taken when mtlgen is built.
  static const char* revision();
  std::vector<LoopFormKernel> kernels;  // each placed by ir::with_loop_forms
  const LoopFormKernel* find(const std::string& function) const {
    for (const auto& k : kernels)
      if (k.function == function) return &k;
    return nullptr;
  }
  // Every form, one after another: for a file whose kernels name nothing it undefines after
  // them, to include after its simulator copy (mtlgen_loop_form).
  std::string text() const;
};

// A parsed translation unit.
class Unit {
 public:
  ~Unit();
  Unit(Unit&&) noexcept;
  Unit& operator=(Unit&&) noexcept;

  const std::vector<EntryPoint>& entry_points() const { return entry_points_; }
  const EntryPoint* find(const std::string& host_name) const;
  const std::vector<FunctionConstant>& function_constants() const { return function_constants_; }
  const std::vector<ThreadgroupVariable>& threadgroup_variables() const { return threadgroup_variables_; }
  const std::string& text() const { return text_; }  // as read (before the front end's rewrites)
  const std::vector<UnreadableKernel>& unreadable_kernels() const { return unreadable_kernels_; }
  // Explicit instantiations left out of the parse (ParseOptions::needed_entry_points): 0 when
  // entry_points() lists every entry point of the file.
  size_t instantiations_left_out() const { return instantiations_left_out_; }

  // The source the simulator compiles with g++ against the shim, same lines as the original:
  //  * `[[threadgroup(n)]]` respelled `[[mtlsim_tgrp(n)]]` (the shim's `threadgroup` is a macro);
  //  * every `threadgroup` variable declared in a body becomes a reference to per-threadgroup
  //    storage: `threadgroup float s[32];` -> `auto& s = ::mtlsim::threadgroup_local<float[32]>([]{}, "s");`
  //  * `constant` becomes `const` (same width) everywhere except in function-constant
  //    declarations, which stay assignable so one module serves every value.
  // After its last newline, a comment lists the lines of the explicit instantiations a module
  // leaves out (drop_explicit_instantiations below).
  std::string simulator_source() const;
  // The same rewrite applied to every local header the file includes (MLX keeps its kernel
  // templates in headers, in subdirectories of an include root), each with the path under which a
  // copy of the tree finds it: `key` relative to the main file's copy, for a compiler given that
  // directory with -I (as spelled when an include directory held it, else beside its includer).
  // Each copy starts with `#line` (header_line_directive): g++, its line table and the
  // simulator's reports then number the header's lines n * kHeaderLineStride + line, so that a
  // finding inside it can name the header (header_line_of), not the main file.
  struct Header {
    std::filesystem::path path;  // as clang opened it
    std::string key;             // e.g. "mlx/backend/metal/kernels/utils.h", "ggml-common.h"
    std::string text;            // rewritten for the simulator
  };
  std::vector<Header> simulator_headers() const;
  // The kernels' loop forms, and why a kernel has none (LoopForm above).
  const LoopForm& loop_form() const;

  // The CUDA flavour (msl_cuda_rewrite.cpp), same lines, for nvcc against mtlgen's CUDA
  // <metal_stdlib> (generator/cuda/shim/): `[[...]]` attributes, address-space words,
  // `kernel` and explicit instantiations blanked; `__device__` before every function; body
  // `threadgroup` variables `__shared__`; function constants `__device__` variables; vector type
  // names respelled `mtl_float4` (CUDA's own `float4` is global).
  std::string cuda_source() const;
  // The same for the local headers the file includes (every one, changed or not), placed as
  // simulator_headers() places them.
  std::vector<Header> cuda_headers() const;

  struct Impl;

 private:
  friend Unit parse(const ParseOptions&, support::Diagnostics&);
  Unit();
  std::unique_ptr<Impl> impl_;
  std::vector<EntryPoint> entry_points_;
  std::vector<FunctionConstant> function_constants_;
  std::vector<ThreadgroupVariable> threadgroup_variables_;
  std::vector<UnreadableKernel> unreadable_kernels_;
  size_t instantiations_left_out_ = 0;
  std::string text_;
};

// Blanks, in the simulator's copies of a hand-written file (`main_text`, from simulator_source())
// and of its local headers (by Header::key), the lines of the explicit instantiations, as the table
// simulator_source() ends with lists them: the launcher's direct calls instantiate what runs, and
// ggml's 600 or MLX's 2,000 instantiations cost most of a module's compile. Only instantiations on
// lines of their own go, or macro invocations on lines of their own that write nothing else; every
// other line stays where it is.
void drop_explicit_instantiations(std::string& main_text, std::map<std::string, std::string>& headers);

// Parses `options.file` (or `options.text`). Syntax and type errors, and (with
// options.conformance) Metal conformance errors, go to `diags` at the user's file:line:col with
// the offending line; a Unit is returned even then (with what could be read).
Unit parse(const ParseOptions& options, support::Diagnostics& diags);

}  // namespace mtlgen::msl
