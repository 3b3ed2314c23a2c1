// Kernels run both as fibers and in the loop form the MSL front end makes of them
// (loop_form_test.cpp): the two must interleave threads alike and report alike.
#include <metal_stdlib>
using namespace metal;

// Notes which thread reaches which point, in the order they get there.
[[kernel]] void order_trace(device atomic_uint* count [[buffer(0)]],
                            device uint* trace [[buffer(1)]],
                            threadgroup float* partials [[threadgroup(0)]],
                            uint lid [[thread_index_in_threadgroup]],
                            uint lane [[thread_index_in_simdgroup]],
                            uint sg [[simdgroup_index_in_threadgroup]]) {
  trace[atomic_fetch_add_explicit(count, 1u, memory_order_relaxed)] = lid * 4;
  float v = simd_sum(float(lid));
  trace[atomic_fetch_add_explicit(count, 1u, memory_order_relaxed)] = lid * 4 + 1;
  if (lane == 0) partials[sg] = v;
  v = simd_max(v);
  trace[atomic_fetch_add_explicit(count, 1u, memory_order_relaxed)] = lid * 4 + 2;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (lid != 0) return;
  trace[atomic_fetch_add_explicit(count, 1u, memory_order_relaxed)] = uint(partials[0] + v);
}

// Sums of 64-thread rows whose second stage reads one slot per lane: slots past the simdgroup
// count were never written (poison), and no barrier guards the partials (a race the lane orders see).
[[kernel]] void racy_sum(device const float* x [[buffer(0)]],
                         device float* out [[buffer(1)]],
                         threadgroup float* partials [[threadgroup(0)]],
                         uint tgid [[threadgroup_position_in_grid]],
                         uint lid [[thread_index_in_threadgroup]],
                         uint lane [[thread_index_in_simdgroup]],
                         uint sg [[simdgroup_index_in_threadgroup]]) {
  float v = simd_sum(x[tgid * 64 + lid]);
  if (lane == 0) partials[sg] = v;
  float total = simd_sum(partials[lane]);  // MARK:poisoned_sum
  if (lid == 0) out[tgid] = total;
}
