#pragma once
// The advisor's lints, each a question of the profiling decision tree answered before a Mac runs
// the kernel. Static lints read the spec and the dispatch at the realistic case (every tune
// point); counter lints read the simulator's counters of the counted variant.
#include <vector>

#include "advisor/advisor.h"

namespace mtlgen::advisor {

// Lints below these thresholds stay quiet (docs/report.md "Lints").
inline constexpr double kReductionElementsPerLane = 16;  // one simdgroup reducing more per lane
// SIMD units per GPU core (128 FP32 lanes as four 32-wide units, philipturner/metal-benchmarks):
// a grid of fewer one-simdgroup threadgroups than the chip has units leaves units idle.
inline constexpr uint64_t kSimdUnitsPerCore = 4;
inline constexpr double kUncoalesced = 2;                // bytes moved per byte used at one site (above)
inline constexpr double kRereads = 1.5;                  // loads per unique byte of an input
inline constexpr double kRereadShare = 0.25;             // re-read bytes per unique byte of the kernel
inline constexpr uint64_t kThreadgroupMemoryWarn = 8 * 1024;
inline constexpr int64_t kTinyElements = 1000;           // launch overhead dominates below

// Lints of one tune point at the realistic case.
std::vector<Finding> static_lints(const ir::Kernel& kernel, const Point& point, const ir::TestCase& test);
// Lints of the counters of the counted variant.
std::vector<Finding> counter_lints(const ir::Kernel& kernel, const ir::Variant& variant, const Counters& counters);
// The kernel as a whole at the realistic case (once, not per tune point).
std::vector<Finding> case_lints(const ir::Kernel& kernel, const ir::TestCase& test);

}  // namespace mtlgen::advisor
