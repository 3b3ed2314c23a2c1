#pragma once
// One verification case: a kernel variant on one test case's inputs, simulated under several
// lane orders and threadgroup-memory poisons, checked by every checker and against the reference.
// run_case() does the work in-process; start_case() runs it in a sandboxed child process (see
// verify/sandbox.h) so that a crashing, hanging or hostile kernel becomes a reported failure.
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
  const SimModule* module = nullptr;  // loaded only by the case's child
  uint64_t order_seed = 1;  // for the shuffled lane order
  int workers = 1;          // simulator worker threads
  // Run the exact race detector during the forward-order run (the module must be
  // race_instrumented); its findings are `data_race` problems.
  bool exact_races = false;
  ir::ConstantSetting constants;  // function constant values (Kernel::constant_settings); empty: the defaults
  bool report_same_value_stores = false;  // see VerifyOptions
  // Quick mode: when the grid has more threadgroups than this, simulate only this many (the first,
  // the last and a sample seeded by order_seed) and compare only what they wrote. 0: the whole grid.
  uint64_t quick_threadgroups = 0;
  // A kernel family's case: the module of each Family::kernels entry, in order (`module` holds the
  // family's reference).
  std::vector<const SimModule*> member_modules = {};
  // The advisor's counters (access_counts.h) around the baseline run; the module must be access_counted.
  bool count_accesses = false;
  // Which form of the kernel runs (docs/simulator.md, "Loops or fibers"): its loop form where the
  // front end made one (automatic), or one fiber per thread.
  mtlsim::ExecPath exec = mtlsim::ExecPath::automatic;
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
  // Findings that do not fail the case: "memory_model" (a read consumed before a barrier whose
  // mem_flags leave its memory out, and a write after it; mtlsim::DataRace::memory_model_only).
  std::vector<Problem> warnings = {};
  std::vector<OutputStats> outputs;
  double sim_seconds = 0;
  double reference_seconds = 0;
  uint64_t fiber_switches = 0;
  uint64_t threadgroups_as_loops = 0;  // of the baseline run: threadgroups its loop form ran
  std::string output_digest;  // of the baseline run's outputs (empty where the case did not run)
  // Quick mode's partial coverage, e.g. "8 of 1187 threadgroups, 2048 of 303872 output elements
  // compared"; empty when the whole grid ran.
  std::string coverage;
  nlohmann::json counters;  // with CaseRequest::count_accesses: finish_counting's JSON; else null
};

nlohmann::json to_json(const CaseResult& r);
// Checks every field (a child's report is untrusted data); throws std::runtime_error naming the
// first bad field.
CaseResult case_result_from_json(const nlohmann::json& j);

// Adds a problem unless one with the same message is there (the same finding from another run).
void add_unique_problem(CaseResult& r, std::string checker, std::string message);

// Runs spec code: call it only where that is safe (the sandboxed child).
CaseResult run_case(const CaseRequest& request, const LoadedModule& module);

// A case running in a child process (the leader of its own process group).
struct RunningCase {
  pid_t pid = -1;
  int fd = -1;           // the child's report arrives here
  int output_fd = -1;    // the child's stdout and stderr
  std::string received;
  std::string output;    // the start of what the child printed
  size_t output_bytes = 0;
  std::string nonce;     // opens every genuine report frame
  double deadline = 0;   // monotonic seconds
};

RunningCase start_case(const CaseRequest& request, double watchdog_seconds);
// Reads what is available; true once the case is over (finished, crashed or past its deadline),
// with `result` filled in and the child's whole process group killed and reaped. Never throws
// on what the child sent.
bool poll_case(RunningCase& running, CaseResult& result, double watchdog_seconds);

double monotonic_seconds();

}  // namespace mtlgen::verify
