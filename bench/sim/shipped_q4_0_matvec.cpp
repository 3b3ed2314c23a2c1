// q4_0_matvec as shipped (out/q4_0_matvec), for sim_bench: see shipped_kernels.h.
#include "shipped_kernels.h"
// clang-format off
#include <q4_0_matvec/q4_0_matvec.metal>  // simulator copy (see mtlsim_prepare_msl)
#include <q4_0_matvec_loops.inc>          // its loop form (mtlgen_loop_forms)
// clang-format on

namespace sim_bench {
namespace {

struct Launch {
  Q4Args* args;
  q4_0_matvec_params params;
};

void launch(const mtlsim::ThreadContext& tc, void* user) {
  auto& l = *static_cast<Launch*>(user);
  q4_0_matvec<float, kQ4Tg, kQ4Rps>(l.args->w, l.args->x, l.args->y, l.params, tc.threadgroup_position_in_grid.x,
                                    tc.thread_index_in_simdgroup, tc.simdgroup_index_in_threadgroup);
}

void group(const mtlsim::detail::LoopRun& run, void* user) {
  auto& l = *static_cast<Launch*>(user);
  const mtlsim::ThreadContext& tc = run.contexts[0];
  mtlsim_loops_q4_0_matvec<float, kQ4Tg, kQ4Rps>(l.args->w, l.args->x, l.args->y, l.params,
                                                 tc.threadgroup_position_in_grid.x, tc.thread_index_in_simdgroup,
                                                 tc.simdgroup_index_in_threadgroup, run);
}

}  // namespace

mtlsim::DispatchResult dispatch_q4_0_matvec(Q4Args& args, int workers, bool loops) {
  static_assert(sizeof(block_q4_0) == kQ4BlockBytes);
  Launch l{&args, {kQ4Rows, kQ4K}};
  mtlsim::DispatchOptions o;
  o.threadgroups = {(kQ4Rows + kQ4Tg / 32 * kQ4Rps - 1) / (kQ4Tg / 32 * kQ4Rps), 1, 1};
  o.threads_per_threadgroup = {kQ4Tg, 1, 1};
  o.workers = workers;
  o.group_fn = loops ? group : nullptr;
  o.kernel_name = "q4_0_matvec_f32_tg64_rps4";
  o.kernel_function = "q4_0_matvec";
  return mtlsim::dispatch(o, launch, &l);
}

}  // namespace sim_bench
