#pragma once
// What one simulated dispatch of a kernel variant needs from the IR, shared by single-kernel
// cases and kernel-family cases: the parameter struct's bytes and the simulator's dispatch options.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/kernel.h"
#include "mtlsim/runtime.h"
#include "verify/guarded_buffer.h"

namespace mtlgen::verify {

// One simulated run of a case: lane order, which output poison, whether threadgroup memory starts
// as NaN poison or as zeros, and where buffers sit against their guard pages. Run 0 is the baseline
// compared with the reference.
struct RunSpec {
  mtlsim::LaneOrder order;
  int output_poison;
  bool zeroed_threadgroup_memory;
  GuardedBuffer::Placement placement;  // end flush catches overruns at once, start flush underruns
  const char* label;
};
inline constexpr RunSpec kRuns[] = {
    {mtlsim::LaneOrder::forward, 0, false, GuardedBuffer::Placement::flush_end, "forward order"},
    {mtlsim::LaneOrder::reverse, 1, false, GuardedBuffer::Placement::flush_start, "reverse order"},
    {mtlsim::LaneOrder::shuffled, 0, false, GuardedBuffer::Placement::flush_end, "shuffled order"},
    {mtlsim::LaneOrder::forward, 1, true, GuardedBuffer::Placement::flush_end, "zeroed threadgroup memory"},
};

// The value of a scalar by name (the test case's, else the default).
using ScalarValue = std::function<double(const std::string&)>;

// The bytes of `kernel`'s parameter struct: every dim as uint32, then every scalar.
std::vector<uint8_t> params_bytes(const ir::Kernel& kernel, const std::map<std::string, int64_t>& dims,
                                  const ScalarValue& scalar);

// Grid, threadgroup shape, threadgroup arrays (poisoned or zeroed as `run` says), lane order and
// names for a dispatch of `variant` at `env` (ir::Kernel::env_for of the dispatch's dims).
mtlsim::DispatchOptions dispatch_options(const ir::Kernel& kernel, const ir::Variant& variant, const expr::Env& env,
                                         const RunSpec& run, uint64_t order_seed, int workers);

}  // namespace mtlgen::verify
