#pragma once
// One verification case: a kernel variant on one test case's inputs, simulated under several
// lane orders and threadgroup-memory poisons, checked by every checker and against the reference.
// run_case() does the work in-process; start_case() runs it in a child process so a crashing or
// hanging kernel becomes a reported failure.
#include <sys/types.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/kernel.h"
#include "verify/compare.h"
#include "verify/sim_module.h"

namespace mtlgen::verify {

struct CaseRequest {
  const ir::Kernel* kernel = nullptr;
  const ir::Variant* variant = nullptr;
  const ir::TestCase* test = nullptr;
  const SimModule* module = nullptr;
  uint64_t order_seed = 1;  // for the shuffled lane order
  int workers = 1;          // simulator worker threads
  // Run the exact race detector during the forward-order run (the module must be
  // race_instrumented); its findings are `data_race` problems.
  bool exact_races = false;
  ir::ConstantSetting constants;  // function constant values (Kernel::constant_settings); empty: the defaults
};

// skipped: the variant's preconditions exclude the case's dims; it was not run (not a failure).
enum class CaseStatus { pass, fail, crash, hang, error, skipped };
const char* to_string(CaseStatus s);

struct Problem {
  std::string checker;  // "mismatch", "race", "data_race", "uninitialised-threadgroup-memory", "unwritten-output",
                        // "barrier", "simd", "crash", "hang", "error", ...
  std::string message;  // complete and actionable
};

struct CaseResult {
  CaseStatus status = CaseStatus::pass;
  std::vector<Problem> problems;
  std::vector<OutputStats> outputs;
  double sim_seconds = 0;
  double reference_seconds = 0;
  uint64_t fiber_switches = 0;
};

nlohmann::json to_json(const CaseResult& r);
CaseResult case_result_from_json(const nlohmann::json& j);

CaseResult run_case(const CaseRequest& request);

// A case running in a child process.
struct RunningCase {
  pid_t pid = -1;
  int fd = -1;           // the child's report arrives here
  std::string received;
  double deadline = 0;   // monotonic seconds
};

RunningCase start_case(const CaseRequest& request, double watchdog_seconds);
// Reads what is available; true once the case is over (finished, crashed or past its deadline),
// with `result` filled in.
bool poll_case(RunningCase& running, CaseResult& result, double watchdog_seconds);

double monotonic_seconds();

}  // namespace mtlgen::verify
