// Kernels for the scheduler's tests: when threads run as plain calls and when as fibers, the
// lane order at simd functions and barriers, and private memory across suspensions.
#include <metal_stdlib>
using namespace metal;

// Never blocks: a threadgroup runs as one loop of calls on one stack.
[[kernel]] void scale(device const float* x [[buffer(0)]],
                      device float* y [[buffer(1)]],
                      uint gid [[thread_position_in_grid]]) {
  y[gid] = 2.0f * x[gid];
}

// Only simdgroup 0 reaches a simd function; the other threads never block.
[[kernel]] void first_simdgroup_sums(device const float* x [[buffer(0)]],
                                     device float* y [[buffer(1)]],
                                     uint tid [[thread_position_in_threadgroup]],
                                     uint sg [[simdgroup_index_in_threadgroup]]) {
  float v = x[tid];
  if (sg == 0) v = simd_sum(v);
  y[tid] = v;
}

// Appends (thread, step) to a log at each step: the order the simulator ran the threads in.
// One worker, so the plain increment is safe.
[[kernel]] void log_steps(device uint* log [[buffer(0)]],
                          device uint* count [[buffer(1)]],
                          uint tid [[thread_position_in_threadgroup]]) {
  log[(*count)++] = tid * 4 + 0;
  (void)simd_sum(float(tid));
  log[(*count)++] = tid * 4 + 1;
  threadgroup_barrier(mem_flags::mem_device);
  log[(*count)++] = tid * 4 + 2;
}

// A private array kept across a simd function and a barrier while every other thread runs (on
// other stacks, some reused after their threads returned).
[[kernel]] void private_across_blocks(device float* out [[buffer(0)]],
                                      uint tid [[thread_position_in_threadgroup]]) {
  float mine[64];
  for (uint i = 0; i < 64; ++i) mine[i] = float(tid * 64 + i);
  const float total = simd_sum(1.0f);
  threadgroup_barrier(mem_flags::mem_none);
  float sum = 0.0f;
  for (uint i = 0; i < 64; ++i) sum += mine[i];
  out[tid] = sum + total;
}
