#pragma once
// `mtlgen verify`: every spec x dtype x tune variant x test case, simulated and checked against
// the reference, each case isolated in a child process with a watchdog.
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "ir/kernel.h"
#include "verify/sim_module.h"

namespace mtlgen::verify {

class GpuBackend;

struct VerifyOptions {
  std::vector<std::string> inputs;  // spec files or directories
  std::vector<std::string> include_dirs;  // -I: for the #includes of `source:` kernels
  ir::VariantSelection variants = ir::VariantSelection::defaults;
  std::string case_filter;          // run only the case of this name
  uint64_t seed = 1;                // lane-shuffle seed
  // Also run the exact race detector (on an instrumented module, in the forward-order run).
  // Lane-order comparison runs either way.
  bool exact_races = false;
  // With exact_races: also report two unordered stores of the same value to one element (benign
  // by default; see docs/simulator.md).
  bool report_same_value_stores = false;
  int jobs = 0;                     // concurrent cases; 0 = number of cores
  int workers = 1;                  // simulator threads per case
  int shard_index = 1, shard_count = 1;
  double timeout_seconds = 120;     // watchdog per case
  std::string json_path;
  bool quiet = false;               // failures and the summary only
  // Quick mode: a case whose grid has more threadgroups runs only this many (first, last and a
  // sample seeded by `seed`) and compares what they wrote; reported as partial. 0: whole grids.
  uint64_t quick_threadgroups = 0;
  // A progress line (cases done, failures, time left) redrawn in place: for a terminal. Without
  // it, --quiet still prints a plain progress line at most every 30 s (CI logs).
  bool progress_line = false;
  // Report a passing case from <cache>/results/ when nothing it depends on changed (result_cache.h).
  bool result_cache = true;
  ModuleOptions module;
  // `--gpu cuda`: run the cases on an NVIDIA GPU instead of the simulator, through `gpu_backend`
  // (the CLI sets both); with `sanitize`, under compute-sanitizer's tools too.
  std::string gpu;
  const GpuBackend* gpu_backend = nullptr;
  bool sanitize = false;
  // `--exec`: run each kernel's loop form where the MSL front end made one (automatic, the
  // default: "loops"), or every kernel one fiber per thread ("fibers"). docs/simulator.md.
  mtlsim::ExecPath exec = mtlsim::ExecPath::automatic;
};

// A device that runs the cases instead of the simulator (`--gpu`). Its back end lives in a room
// after verify's (generator/cuda uses verify's inputs, comparison and module cache), so verify
// names none: the CLI hands it the one it links.
class GpuBackend {
 public:
  virtual ~GpuBackend() = default;
  // The selection of `options` (variants, cases, constants) on the loaded and checked `kernels`;
  // returns an exit code as run_verify does.
  virtual int verify(const std::vector<ir::Kernel>& kernels, const VerifyOptions& options, std::ostream& out,
                     std::ostream& err) const = 0;
};

// Returns an exit code (support::ExitCode): 0 all passed, 1 spec errors, 4 a case failed.
int run_verify(const VerifyOptions& options, std::ostream& out, std::ostream& err);

}  // namespace mtlgen::verify
