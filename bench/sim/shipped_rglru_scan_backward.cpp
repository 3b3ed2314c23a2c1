// The rglru_scan_backward family as shipped (out/rglru_scan_checkpoints and
// out/rglru_scan_backward_segments), for sim_bench: see shipped_kernels.h.
#include "shipped_kernels.h"
// Each generated file defines its own helpers (SIMD_SIZE), as Metal compiles each .metal alone: one
// namespace per file here.
#include <metal_stdlib>
// clang-format off
namespace checkpoints_msl {
#include <rglru_scan_checkpoints/rglru_scan_checkpoints.metal>  // simulator copy (mtlsim_prepare_msl)
#include <rglru_scan_checkpoints_loops.inc>                     // its loop form (mtlgen_loop_forms)
}
namespace segments_msl {
#include <rglru_scan_backward_segments/rglru_scan_backward_segments.metal>
#include <rglru_scan_backward_segments_loops.inc>
}
// clang-format on

namespace sim_bench {
namespace {

using namespace checkpoints_msl;
using namespace segments_msl;

struct Launch {
  ScanArgs* args;
  rglru_scan_checkpoints_params ck;
  rglru_scan_backward_segments_params seg;
};

void launch_checkpoints(const mtlsim::ThreadContext& tc, void* user) {
  auto& l = *static_cast<Launch*>(user);
  ScanArgs& a = *l.args;
  rglru_scan_checkpoints<float, kScanTg>(a.a, a.b, a.h0, a.checkpoints, l.ck,
                                         mtlsim::as_builtin<uint2>(tc.thread_position_in_threadgroup),
                                         mtlsim::as_builtin<uint2>(tc.threadgroup_position_in_grid));
}
void group_checkpoints(const mtlsim::detail::LoopRun& run, void* user) {
  auto& l = *static_cast<Launch*>(user);
  ScanArgs& a = *l.args;
  const mtlsim::ThreadContext& tc = run.contexts[0];
  mtlsim_loops_rglru_scan_checkpoints<float, kScanTg>(a.a, a.b, a.h0, a.checkpoints, l.ck,
                                                      mtlsim::as_builtin<uint2>(tc.thread_position_in_threadgroup),
                                                      mtlsim::as_builtin<uint2>(tc.threadgroup_position_in_grid), run);
}

void launch_segments(const mtlsim::ThreadContext& tc, void* user) {
  auto& l = *static_cast<Launch*>(user);
  ScanArgs& a = *l.args;
  rglru_scan_backward_segments<float, kScanTg>(a.a, a.b, a.checkpoints, a.dy, a.dh_final, a.da, a.db, a.dh0, l.seg,
                                               mtlsim::as_builtin<uint2>(tc.thread_position_in_threadgroup),
                                               mtlsim::as_builtin<uint2>(tc.threadgroup_position_in_grid));
}
void group_segments(const mtlsim::detail::LoopRun& run, void* user) {
  auto& l = *static_cast<Launch*>(user);
  ScanArgs& a = *l.args;
  const mtlsim::ThreadContext& tc = run.contexts[0];
  mtlsim_loops_rglru_scan_backward_segments<float, kScanTg>(
      a.a, a.b, a.checkpoints, a.dy, a.dh_final, a.da, a.db, a.dh0, l.seg,
      mtlsim::as_builtin<uint2>(tc.thread_position_in_threadgroup),
      mtlsim::as_builtin<uint2>(tc.threadgroup_position_in_grid), run);
}

}  // namespace

// Both dispatches back to back, as the family runs them; the result is the first failing one's,
// else the second's with the fiber switches of both.
mtlsim::DispatchResult dispatch_rglru_scan_backward(ScanArgs& args, int workers, bool loops) {
  Launch l{&args, {kScanBatch, kScanLen, kScanDim, kScanSeg}, {kScanBatch, kScanLen, kScanDim, kScanSeg}};
  mtlsim::DispatchOptions o;
  o.threadgroups = {(kScanDim + kScanTg - 1) / kScanTg, kScanBatch, 1};
  o.threads_per_threadgroup = {kScanTg, 1, 1};
  o.workers = workers;
  o.group_fn = loops ? group_checkpoints : nullptr;
  o.kernel_name = "rglru_scan_checkpoints_f32_tg32";
  o.kernel_function = "rglru_scan_checkpoints";
  mtlsim::DispatchResult first = mtlsim::dispatch(o, launch_checkpoints, &l);
  if (!first.ok()) return first;
  o.group_fn = loops ? group_segments : nullptr;
  o.kernel_name = "rglru_scan_backward_segments_f32_tg32";
  o.kernel_function = "rglru_scan_backward_segments";
  mtlsim::DispatchResult second = mtlsim::dispatch(o, launch_segments, &l);
  second.fiber_switches += first.fiber_switches;
  return second;
}

}  // namespace sim_bench
