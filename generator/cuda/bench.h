#pragma once
// `mtlgen bench --gpu cuda`: every tune point of each kernel timed on an NVIDIA GPU at the spec's
// benchmark cases, in the program `verify --gpu cuda` builds (gpu_verify.h). A relative guide
// between variants, not an Apple GPU timing: docs/gpu.md.
#include <ostream>
#include <string>
#include <vector>

#include "verify/sim_module.h"

namespace mtlgen::cuda {

struct BenchOptions {
  std::vector<std::string> inputs;  // spec files or directories
  std::vector<std::string> include_dirs;  // -I: for the #includes of `source:` kernels
  std::string case_filter;          // else the spec's benchmark cases (or its largest test case)
  std::string kernel_filter;        // only kernels of this name
  int warmups = 5;
  int repeats = 50;                 // timed launches; the median is reported
  std::string json_path;            // also write the sweep here
  verify::ModuleOptions module;
};

// Returns an exit code (support::ExitCode).
int run_bench(const BenchOptions& options, std::ostream& out, std::ostream& err);

}  // namespace mtlgen::cuda
