// rms_norm compiled the way `mtlgen report` compiles kernels for the advisor's counters (see
// CMakeLists.txt): a hook call before every load and store, counted barriers and simd functions.
#include "rms_norm_launch.h"
// clang-format off
#include <kernels/rms_norm.metal>  // simulator copy (see mtlsim_prepare_msl)
// clang-format on

namespace sim_bench {

__attribute__((visibility("default"))) void launch_rms_norm_counted(const mtlsim::ThreadContext& tc, void* user) {
  auto& a = *static_cast<RmsArgs*>(user);
  rms_norm<float, kRmsTg>(a.x, a.w, a.y, a.n, a.eps, static_cast<float*>(tc.threadgroup_memory[0]),
                          tc.threadgroup_position_in_grid.x, tc.thread_position_in_threadgroup.x,
                          tc.thread_index_in_simdgroup, tc.simdgroup_index_in_threadgroup);
}

}  // namespace sim_bench
