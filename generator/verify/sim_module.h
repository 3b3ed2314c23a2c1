#pragma once
// A kernel's simulator module: what the types, reference and simulator emitters write for it (the
// .metal as the simulator compiles it, one launcher per entry point, the generated host
// description and the C++ reference) compiled against the shim into a shared object. Modules are cached by the
// hash of everything that goes into them, so a re-run compiles nothing.
#include <filesystem>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "emit_sim/sim_emitter.h"
#include "ir/kernel.h"
#include "mtlsim/host_dispatch.h"
#include "mtlsim/runtime.h"

namespace mtlgen::verify {

// `dims`: the Dims fields in spec order; `scalars`: the Scalars fields in spec order; `constants`:
// one value per function constant, in declaration order (an ir::ConstantSetting). The module's
// bridge builds the generated structs from them, as a caller of the glue fills them.
using ReferenceFn = int (*)(void* const* slot, const uint64_t* elements, const uint64_t* dims, const double* scalars,
                            const double* constants, char* error, size_t error_size);
// Sets the kernel's function constants for the dispatches that follow (process-wide).
using FunctionConstantsFn = void (*)(const double* constants);

struct ModuleOptions {
  std::filesystem::path cache_dir;  // empty: $MTLGEN_CACHE_DIR, else $XDG_CACHE_HOME/mtlgen, else ~/.cache/mtlgen
  std::string compiler = "g++";
  bool verbose = false;
  // For exact race detection: the kernel's code is compiled with -fsanitize=thread (linked
  // without libtsan: the simulator runtime takes the instrumentation calls) and line tables, so
  // DispatchOptions::detect_races works and reports source lines. A separate cache entry.
  bool race_instrumented = false;
  // For the advisor's counters: the kernel's code calls mtlsim_count_access before every load and
  // store (g++ -fsanitize=kernel-address, no sanitizer runtime; mtlsim/access_counter.h) and
  // counts barriers and simd functions (-DMTLSIM_COUNTERS). A separate cache entry.
  bool access_counted = false;
  // What private (thread) variables hold before the kernel writes them (g++
  // -ftrivial-auto-var-init): 0xFE bytes by default, the same in every run, so that a kernel
  // reading one is not mistaken for a racy one; zeros in the module verify builds to tell
  // whether outputs depend on them. A separate cache entry.
  enum class PrivateInit { pattern, zero };
  PrivateInit private_init = PrivateInit::pattern;
  // The variants (entry points) the module can run; empty: every variant. Only their launchers
  // and instantiations are compiled, most of a module's time (emit::emit_sim_variants); a module
  // for another set is another cache entry.
  std::set<std::string> entry_points;
  // A compile running longer is killed (with its process group) and reported.
  double compile_timeout_seconds = 600;
};

// Spec code that would make the compiler read a file of the host (include_policy.h): a located
// error, "file:line:col: error: ...", thrown before anything is compiled.
struct RefusedSpecCode : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A compiled module on disk. Building it runs only the compiler: the parent `mtlgen` never loads
// spec code (file-scope constructors, kernels, references); each case's sandboxed child loads the
// module with LoadedModule.
class SimModule {
 public:
  // Builds (or finds in the cache) the module; throws RefusedSpecCode, or std::runtime_error with
  // the compiler's diagnostics on failure.
  SimModule(const ir::Kernel& kernel, const ModuleOptions& options);

  bool was_cached() const { return cached_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  bool cached_ = false;
  std::filesystem::path path_;
};

// A module loaded into this process (dlopen: runs its file-scope constructors). Only the case
// child creates one, after its sandbox is in place.
class LoadedModule {
 public:
  explicit LoadedModule(const std::filesystem::path& path);  // throws std::runtime_error
  ~LoadedModule();
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;

  mtlsim::KernelThreadFn thread_fn(const ir::Variant& variant) const;
  // The variant's loop form (docs/simulator.md, "Loops or fibers"); null where the front end made none.
  mtlsim::KernelGroupFn group_fn(const ir::Variant& variant) const;
  ReferenceFn reference_fn(const std::string& symbol) const;  // see reference_symbol()
  // Sets the kernel's function constants to `values` (one per Kernel::function_constants, in its
  // order) before a dispatch: a hand-written kernel's object takes them by their Metal index.
  void set_function_constants(const ir::Kernel& kernel, const std::vector<double>& values) const;
  // The kernel's generated host description (its <kernel>_types.h), as the glue runs it.
  MtlsimHostDispatchFn host_dispatch_fn() const;

 private:
  void* handle_ = nullptr;
};

// Runs argv[0] (found on PATH) in `cwd` without a shell, stdin from /dev/null, stdout and stderr
// captured, in a process group of its own killed after `timeout_seconds`; `status` is the exit
// status (-1 when killed or not started). The compiler's runner, also used for `--gpu cuda`.
std::string run_program(const std::vector<std::string>& argv, const std::filesystem::path& cwd, int& status,
                        double timeout_seconds);

std::filesystem::path default_cache_dir();
// Where `options` keep modules (and verify its passing results): cache_dir, else default_cache_dir().
std::filesystem::path cache_dir(const ModuleOptions& options);

using emit::launcher_symbol;
using emit::reference_symbol;

// How reports name line `line` of the .metal the simulator ran: " (specs/x.yaml:21)" inside a
// spec block (body, prelude, metal_prelude), " (file.metal:36)" for a hand-written kernel, ""
// elsewhere (code mtlgen wrote around the blocks). `msl` is emit::msl_source(kernel).
std::string spec_line_note(const ir::Kernel& kernel, const std::string& msl, int line);
// `message` with spec_line_note after every "line N" in it.
std::string with_spec_lines(const ir::Kernel& kernel, const std::string& msl, const std::string& message);

}  // namespace mtlgen::verify
