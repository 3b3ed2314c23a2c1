#pragma once
// The performance advisor: for each kernel, the realistic test case (the one moving the most
// bytes), the simulator's counters of its default variant there, the spec's cost model checked
// against them, a predicted time per tune point and chip (model.h), and lints that each name the
// kernel, variant, source line and fix (lints.h); for a kernel family, each dispatch's member
// predicted at the dims it binds, summed (family.cpp). Pure analysis; `mtlgen report` renders it.
#include <functional>
#include <map>
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

// One dispatch of a family at a family case: the member's variant the family's glue serves there
// (ir::Family::member_variant), at the dims the dispatch binds, predicted from the member's spec.
struct DispatchPrediction {
  size_t dispatch = 0;  // 1-based, as `bench` numbers them
  const ir::Kernel* member = nullptr;
  const ir::Variant* variant = nullptr;
  std::map<std::string, int64_t> dims;
  Workload workload;
  bool counted = false;  // its member's counters applied
  std::vector<Prediction> per_chip;  // in chips() order; each with its own launch
};

// A family variant at one case: its dispatches back to back in one command buffer, the time the
// sum of theirs (each dispatch waits for the one before; each pays its launch).
struct FamilyPoint {
  const ir::Variant* variant = nullptr;  // the family's (its types)
  const ir::TestCase* test = nullptr;
  std::vector<DispatchPrediction> dispatches;
  std::vector<double> total_us;  // per chip, in chips() order
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
  // A kernel family: every variant at each of its cases (family_cases); `points` stays empty.
  std::vector<FamilyPoint> family;
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

// The model's view of `variant` at `dims` (the case's, or a family dispatch's bound dims).
Workload workload(const ir::Kernel& kernel, const ir::Variant& variant, const std::map<std::string, int64_t>& dims);

// A family's cases to predict: its benchmark cases, else its realistic case.
std::vector<const ir::TestCase*> family_cases(const ir::Kernel& family);
// The counters of a family's members by kernel name: those of the members' own advice (a member
// is also a kernel of the library, counted at its own counted case); a member without is predicted
// from its spec alone.
using MemberCounters = std::map<std::string, const Counters*>;
MemberCounters member_counters(const std::vector<KernelAdvice>& advice);
// Each dispatch of `family` at `variant` and `test`, its member's counters applied as to any tune
// point of its body; throws expr::EvalError when a bound dim cannot be evaluated.
FamilyPoint predict_family(const ir::Kernel& family, const ir::Variant& variant, const ir::TestCase& test,
                           const MemberCounters& counters);
// A family's advice: every variant at each of its cases (family_cases). advise() gives a family
// this with no member counters.
KernelAdvice advise_family(const ir::Kernel& family, const MemberCounters& counters);

nlohmann::json to_json(const KernelAdvice& advice);

}  // namespace mtlgen::advisor
