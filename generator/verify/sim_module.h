#pragma once
// A kernel's simulator module: its emitted .metal compiled as C++ against the shim, with one
// launcher per entry point and the C++ reference, as a shared object. Modules are cached by the
// hash of everything that goes into them, so a re-run compiles nothing.
#include <filesystem>
#include <string>

#include "ir/kernel.h"
#include "mtlsim/runtime.h"

namespace mtlgen::verify {

// `constants`: one value per function constant, in declaration order (an ir::ConstantSetting).
using ReferenceFn = int (*)(void* const* slot, const uint64_t* elements, const void* dims, const void* scalars,
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
};

class SimModule {
 public:
  // Builds (or finds in the cache) and loads the module; throws std::runtime_error with the
  // compiler's diagnostics on failure.
  SimModule(const ir::Kernel& kernel, const ModuleOptions& options);
  ~SimModule();
  SimModule(const SimModule&) = delete;
  SimModule& operator=(const SimModule&) = delete;

  mtlsim::KernelThreadFn thread_fn(const ir::Variant& variant) const;
  ReferenceFn reference_fn(const std::string& symbol) const;  // see reference_symbol()
  FunctionConstantsFn function_constants_fn() const;
  bool was_cached() const { return cached_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  void* handle_ = nullptr;
  bool cached_ = false;
  std::filesystem::path path_;
};

std::filesystem::path default_cache_dir();

// Symbol of a variant's launcher (a KernelThreadFn).
std::string launcher_symbol(const ir::Variant& variant);

// Symbol of a variant's reference entry: one per type combination (tunables do not matter).
std::string reference_symbol(const ir::Kernel& kernel, const ir::Variant& variant);

}  // namespace mtlgen::verify
