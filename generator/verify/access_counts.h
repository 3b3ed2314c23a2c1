#pragma once
// The performance advisor's counters of one case (`mtlgen report`): what the kernel's baseline
// run loaded and stored per buffer (total and unique bytes), per access site the bytes it moved
// and the 32/64/128-byte segments each simdgroup execution touched, the active lanes of every
// simd function, the barriers passed and the dispatch's shape. Counted in the case's child on a
// module built with ModuleOptions::access_counted (CaseRequest::count_accesses); the parent reads
// the JSON back (CaseResult::counters) and count_case() resolves each site to its source line.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/kernel.h"
#include "mtlsim/host_dispatch.h"
#include "verify/sim_module.h"

namespace mtlgen::verify {

struct CountedBuffer {
  std::string name;
  const void* data = nullptr;
  size_t bytes = 0;
};

// Threadgroups (in linear order) whose simdgroup accesses are recorded for the coalescing counts:
// a pattern repeats across threadgroups, and recording costs memory per access.
inline constexpr uint64_t kSampledThreadgroups = 2;

// In the child, just before the baseline dispatch: watch every buffer, record sites.
void start_counting(const std::vector<CountedBuffer>& buffers);
// Just after it: the counters as JSON. Sites carry the " [pc 0x.. in ..]" marker of
// describe_fault_pc (a line only the parent can resolve).
nlohmann::json finish_counting(const std::vector<CountedBuffer>& buffers, const mtlsim::HostDispatch& host);

// Runs `test` at `variant` of `kernel` on `module` (built with access_counted) in a sandboxed
// child and returns its counters, each site's marker replaced by "line" (the .metal line, 0 if
// unknown) and "spec_line" (the spec's line for a spec-body kernel, else 0). Throws
// std::runtime_error naming the case when it fails (the advisor counts verified kernels).
nlohmann::json count_case(const ir::Kernel& kernel, const ir::Variant& variant, const ir::TestCase& test,
                          const SimModule& module, double timeout_seconds);

}  // namespace mtlgen::verify
