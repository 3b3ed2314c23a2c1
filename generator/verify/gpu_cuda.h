#pragma once
// `--gpu cuda`: the kernel's shipped MSL, rewritten by the MSL front end into CUDA C++
// (emit_cuda), compiled with nvcc beside the generated host description and reference, and run on
// an NVIDIA GPU. `verify --gpu cuda` compares every selected variant x test case with the
// reference (inputs and comparison as in the simulator path; a kernel family's kernels run in
// order over one set of device buffers, as its glue dispatches them, and the family's reference
// judges its outputs); `--sanitize` also runs each case
// under compute-sanitizer's memcheck, racecheck, synccheck and initcheck and names the .metal and
// spec lines of what they report. `bench --gpu cuda` times every tune point at the spec's
// benchmark cases. What this can and cannot say about Apple GPUs: docs/gpu.md.
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "ir/kernel.h"
#include "verify/verify.h"

namespace mtlgen::verify {

// nvcc: $MTLGEN_NVCC, else on PATH, else /usr/local/cuda/bin/nvcc; nullopt when none exists.
std::optional<std::filesystem::path> find_nvcc();
// The one line `--gpu cuda` prints where there is no nvcc (CI has none); the command then exits 0.
std::string nvcc_missing_line(const char* command);

int run_gpu_verify(const std::vector<ir::Kernel>& kernels, const VerifyOptions& options, std::ostream& out,
                   std::ostream& err);

struct BenchOptions {
  std::vector<std::string> inputs;  // spec files or directories
  std::vector<std::string> include_dirs;  // -I: for the #includes of `source:` kernels
  std::string case_filter;          // else the spec's benchmark cases (or its largest test case)
  std::string kernel_filter;        // only kernels of this name
  int warmups = 5;
  int repeats = 50;                 // timed launches; the median is reported
  std::string json_path;            // also write the sweep here
  ModuleOptions module;
};

// Returns an exit code (support::ExitCode).
int run_gpu_bench(const BenchOptions& options, std::ostream& out, std::ostream& err);

}  // namespace mtlgen::verify
