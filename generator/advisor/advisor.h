#pragma once
// The performance advisor: for each kernel, the realistic test case (the one moving the most
// bytes), the simulator's counters of its default variant there, the spec's cost model checked
// against them, a predicted time per tune point and chip (model.h), and lints that each name the
// kernel, variant, source line and fix (lints.h). Pure analysis; `mtlgen report` renders it.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "advisor/counters.h"
#include "advisor/model.h"
#include "ir/kernel.h"
#include "support/diagnostics.h"

namespace mtlgen::advisor {

struct Finding {
  std::string lint;     // "reduction-one-simdgroup", "uncoalesced", "few-threadgroups", ...
  std::string kernel, variant;  // variant: its entry point
  support::SourceLoc at;        // the spec (or .metal) line the fix goes to
  std::string message;          // what was found, with numbers
  std::string fix;
  std::string text() const;     // "file:line: warning: [lint] kernel variant: message; fix"
};

// The spec's cost model against the counted unique bytes.
struct CostCheck {
  std::string term;  // "bytes_read" or "bytes_written"
  int64_t declared = -1;  // -1: the spec has no such term
  uint64_t counted = 0;
  bool agrees = true;     // within kCostMargin
  std::string message;    // empty when it agrees
};
inline constexpr double kCostMargin = 0.10;  // relative difference the cost model may have

// One tune point at the realistic case.
struct Point {
  const ir::Variant* variant = nullptr;
  std::string label;  // "TG=1024" or, where the types differ from the default's, with them
  Workload workload;
  std::vector<Prediction> per_chip;  // in chips() order
  bool counted = false;  // the variant the counters are of
};

struct KernelAdvice {
  const ir::Kernel* kernel = nullptr;
  std::string skipped;  // why the kernel was not analysed ("" when it was)
  const ir::TestCase* test = nullptr;  // the realistic case: predictions and static lints
  const ir::Variant* counted_variant = nullptr;
  const ir::TestCase* counted_test = nullptr;  // the case counted (counted_case)
  std::optional<Counters> counters;
  std::string count_error;  // why counting failed (then no counters); "" otherwise
  std::vector<CostCheck> cost;
  std::vector<Point> points;
  std::vector<Finding> findings;
};

// Counts one case (verify::count_case in `mtlgen report`; a fake in tests).
using CountFn = std::function<nlohmann::json(const ir::Kernel&, const ir::Variant&, const ir::TestCase&)>;

// `count` may be empty: no counters, predictions from the spec alone. A count that throws leaves
// the kernel without counters, its message in KernelAdvice::count_error.
KernelAdvice advise(const ir::Kernel& kernel, const CountFn& count);

// The realistic case: of the cases the default variant of the first types accepts (of those only
// the benchmark cases, where the spec marks any), the one whose buffers hold the most bytes (the
// first of equals); null when none is accepted.
const ir::TestCase* realistic_case(const ir::Kernel& kernel);
// The case the simulator counts: of the accepted cases within kCountedBytes of buffers and
// kCountedFlops of cost flops (the counted run costs ~10x a plain simulation per access), the one
// whose cost model moves the most bytes (buffer bytes without a cost), the first of equals; else
// the smallest accepted case; null when none is accepted.
inline constexpr int64_t kCountedBytes = 4 << 20;
inline constexpr int64_t kCountedFlops = 16 << 20;
const ir::TestCase* counted_case(const ir::Kernel& kernel);
// The variant counted: the default tuning of the first types.
const ir::Variant& counted_variant(const ir::Kernel& kernel);
// The model's view of `variant` at `test` from the spec alone (apply_counters adds the measured
// terms).
Workload workload(const ir::Kernel& kernel, const ir::Variant& variant, const ir::TestCase& test);
// Threadgroup-wide synchronisations in the body as written (`threadgroup_barrier` and `tg_*`
// calls, each once; 0 for a hand-written kernel).
uint64_t sync_phases(const ir::Kernel& kernel);
// The counted variant's coalescing, loads per unique byte and widest load, applied to `w` (a
// tune point of the same body).
void apply_counters(Workload& w, const Counters& counters);
std::vector<CostCheck> check_cost(const ir::Kernel& kernel, const ir::Variant& variant, const ir::TestCase& test,
                                  const Counters& counters);

nlohmann::json to_json(const KernelAdvice& advice);

}  // namespace mtlgen::advisor
