#pragma once
// What one simulated dispatch of a kernel variant needs, shared by single-kernel cases and
// kernel-family cases: the generated host description's dispatch (checked against the spec) and
// the simulator's dispatch options built from it.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/kernel.h"
#include "mtlsim/runtime.h"
#include "verify/guarded_buffer.h"
#include "verify/sim_module.h"

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

// The Dims fields in spec order, and the Scalars fields in spec order: what the module's bridge
// builds the generated structs from (mtlsim_host_dispatch, the reference entries).
std::vector<uint64_t> dims_values(const ir::Kernel& kernel, const std::map<std::string, int64_t>& dims);
std::vector<double> scalar_values(const ir::Kernel& kernel, const ScalarValue& scalar);

// What the kernel's generated host description (<kernel>_types.h, run inside `module`) computes
// for `variant` at `dims`: the grid, threadgroup size, threadgroup memory and parameter struct the
// glue encodes on the Mac. Empty when it agrees with the spec; else what disagrees (check_dims
// refusing dims the spec accepts, another grid, size, length, entry point or buffer size): a
// dispatch the glue would get wrong.
std::string describe_host_dispatch(const LoadedModule& module, const ir::Kernel& kernel, const ir::Variant& variant,
                                   const std::map<std::string, int64_t>& dims, const ScalarValue& scalar,
                                   mtlsim::HostDispatch& out);

// Quick mode's threadgroups (linear indices, sorted) for a grid of host.threadgroups: the first, the
// last and a sample drawn with `seed`, `count` in all; empty (the whole grid) when the grid has at
// most `count` threadgroups or `count` is 0.
std::vector<uint64_t> sample_threadgroups(const mtlsim::HostDispatch& host, uint64_t count, uint64_t seed);

// The parameter struct's bytes as the host description made them.
std::vector<uint8_t> params_bytes(const mtlsim::HostDispatch& host);

// What the launchers get as `user`: a generated kernel's buffers in the spec's order, its parameter
// struct, then its argument blobs; a hand-written kernel's buffers and argument blobs at their
// [[buffer(n)]] (its kernel object names no spec; a buffer its function constant leaves out is null).
std::vector<void*> launcher_slots(const ir::Kernel& kernel, const ir::Variant& variant, const std::vector<void*>& buffers,
                                  void* params, const std::vector<void*>& arguments);

// Grid, threadgroup shape and threadgroup arrays as the host description computed them (arrays
// poisoned or zeroed as `run` says; a hand-written kernel's at their [[threadgroup(n)]]), lane order
// and names, for a dispatch of `variant`.
mtlsim::DispatchOptions dispatch_options(const ir::Kernel& kernel, const ir::Variant& variant,
                                         const mtlsim::HostDispatch& host, const RunSpec& run, uint64_t order_seed,
                                         int workers);

}  // namespace mtlgen::verify
