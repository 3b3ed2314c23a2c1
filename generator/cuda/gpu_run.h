#pragma once
// What the parts of the CUDA back end share: the program nvcc builds per kernel (nvcc_module.cpp),
// the files a case is handed to the runner in and read back from (runner_protocol.cpp, the other
// side is shim/mtlcu/runner.cu), compute-sanitizer's findings (sanitizer.cpp). Used by `verify
// --gpu cuda` (gpu_verify.cpp) and `bench` (bench.cpp); not a header for other rooms.
#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "ir/kernel.h"
#include "support/parallel.h"
#include "verify/host_buffer.h"
#include "verify/sim_module.h"

namespace mtlgen::cuda {

namespace fs = std::filesystem;

// ---- the module: the CUDA sources, the simulator's bridge and reference, compiled by nvcc ----

struct GpuModule {
  fs::path executable;
  bool cached = false;
  std::string error;  // compile failure, with nvcc's diagnostics
};

// nvcc and a GPU, or nullopt after printing the one line that says which is missing (`command`
// names the subcommand in it); the command then exits 0.
std::optional<fs::path> usable_nvcc(const char* command, std::ostream& out);

// Every kernel runs on the GPU: a family as one program of its kernels' dispatches.
std::vector<const ir::Kernel*> gpu_kernels(const std::vector<ir::Kernel>& kernels);

// Compiles (or finds in the cache) each kernel's program, `jobs` at a time; prints a line per module.
std::map<std::string, GpuModule> build_modules(const std::vector<const ir::Kernel*>& kernels,
                                               const verify::ModuleOptions& mo, const fs::path& nvcc, int jobs,
                                               std::ostream& out);

// Where case `index` of this process is handed to the runner.
fs::path case_dir(const verify::ModuleOptions& mo, size_t index);

// ---- one case: inputs written for the runner, its answer read back ----

struct GpuCase {
  const ir::Kernel* kernel;
  const ir::Variant* variant;
  const ir::TestCase* test;
  ir::ConstantSetting constants;
};

// Writes case.txt and the inputs into `dir`; returns the buffers (their inputs filled). `mode`: "verify" or
// "bench <warmups> <repeats>". Throws std::runtime_error where the case's dims make a family's
// dispatch invalid.
std::vector<verify::HostBuffer> prepare_case(const GpuCase& c, const fs::path& dir, const std::string& mode);

// result.txt: `key value` lines, ending in `ok` or `error <message>`.
std::map<std::string, std::string> read_result(const fs::path& dir);

std::string read_text(const fs::path& p);

// ---- compute-sanitizer ----

// Runs the case's program `exe` on `dir` under memcheck, racecheck, synccheck and initcheck;
// one problem per tool that reported, its findings at .metal and spec lines.
std::vector<std::string> sanitizer_problems(const ir::Kernel& k, const fs::path& exe, const fs::path& dir,
                                            double timeout);

}  // namespace mtlgen::cuda
