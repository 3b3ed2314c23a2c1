// sdpa_vector as shipped (out/sdpa_vector), for sim_bench: see shipped_kernels.h. Its simd_sum sits
// in a loop over keys whose trip count is the same within a simdgroup, so its loop form runs that
// loop as a simdgroup block (docs/simulator.md).
#include "shipped_kernels.h"
// clang-format off
#include <sdpa_vector/sdpa_vector.metal>  // simulator copy (see mtlsim_prepare_msl)
#include <sdpa_vector_loops.inc>          // its loop form, if any (mtlgen_loop_forms)
// clang-format on

namespace sim_bench {
namespace {

struct Launch {
  SdpaArgs* args;
  sdpa_vector_params params;
};

void launch(const mtlsim::ThreadContext& tc, void* user) {
  auto& l = *static_cast<Launch*>(user);
  sdpa_vector<float, bfloat, kSdpaTg, kSdpaD>(
      l.args->q, reinterpret_cast<const bfloat*>(l.args->k), reinterpret_cast<const bfloat*>(l.args->v), l.args->out,
      l.params, static_cast<float*>(tc.threadgroup_memory[0]), static_cast<float*>(tc.threadgroup_memory[1]),
      static_cast<float*>(tc.threadgroup_memory[2]), tc.threadgroup_position_in_grid.x, tc.thread_index_in_threadgroup,
      tc.thread_index_in_simdgroup, tc.simdgroup_index_in_threadgroup);
}

#ifdef MTLSIM_LOOPS_sdpa_vector
void group(const mtlsim::detail::LoopRun& run, void* user) {
  auto& l = *static_cast<Launch*>(user);
  const mtlsim::ThreadContext& tc = run.contexts[0];
  mtlsim_loops_sdpa_vector<float, bfloat, kSdpaTg, kSdpaD>(
      l.args->q, reinterpret_cast<const bfloat*>(l.args->k), reinterpret_cast<const bfloat*>(l.args->v), l.args->out,
      l.params, static_cast<float*>(tc.threadgroup_memory[0]), static_cast<float*>(tc.threadgroup_memory[1]),
      static_cast<float*>(tc.threadgroup_memory[2]), tc.threadgroup_position_in_grid.x, tc.thread_index_in_threadgroup,
      tc.thread_index_in_simdgroup, tc.simdgroup_index_in_threadgroup, run);
}
constexpr mtlsim::KernelGroupFn kGroup = group;
#else
constexpr mtlsim::KernelGroupFn kGroup = nullptr;
#endif

}  // namespace

bool sdpa_vector_has_loop_form() { return kGroup != nullptr; }

mtlsim::DispatchResult dispatch_sdpa_vector(SdpaArgs& args, int workers, bool loops) {
  Launch l{&args, {kSdpaHeads, kSdpaKvHeads, kSdpaD, kSdpaKeys, kSdpaKeys, 0.0f}};
  mtlsim::DispatchOptions o;
  o.threadgroups = {kSdpaHeads, 1, 1};
  o.threads_per_threadgroup = {kSdpaTg, 1, 1};
  o.threadgroup_arrays = {{kSdpaTg / 32 * sizeof(float), {}},
                          {kSdpaTg / 32 * sizeof(float), {}},
                          {kSdpaTg / 32 * kSdpaD * sizeof(float), {}}};
  o.workers = workers;
  o.group_fn = loops ? kGroup : nullptr;
  o.kernel_name = "sdpa_vector_f32_bf16_tg1024_d128";
  o.kernel_function = "sdpa_vector";
  return mtlsim::dispatch(o, launch, &l);
}

}  // namespace sim_bench
