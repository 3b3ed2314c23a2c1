// The shape of mtlgen's own emitted kernels: one attribute list holding `kernel` and
// `max_total_threads_per_threadgroup` with a product of template parameters, and helpers called
// with arithmetic template arguments (`tg_sum<TG_X * TG_Y>` multiplies; it declares no pointer).
#include <metal_stdlib>
using namespace metal;

template <uint N>
inline float tg_sum(float v, threadgroup float* scratch, uint lane, uint group) {
  v = simd_sum(v);
  if (lane == 0) scratch[group] = v;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  float total = 0.0f;
  for (uint i = 0; i < N / 32; ++i) total += scratch[i];
  return total;
}

template <typename T, uint TG_X, uint TG_Y>
[[kernel, max_total_threads_per_threadgroup(TG_X * TG_Y)]] void row_sum(
    const device T* x [[buffer(0)]],
    device float* out [[buffer(1)]],
    threadgroup float* scratch [[threadgroup(0)]],
    uint2 tid [[thread_position_in_threadgroup]],
    uint lane [[thread_index_in_simdgroup]],
    uint group [[simdgroup_index_in_threadgroup]]) {
  uint linear = tid.y * TG_X + tid.x;
  float total = tg_sum<TG_X * TG_Y>(float(x[linear]), scratch, lane, group);
  if (linear == 0) out[0] = total;
}

template [[host_name("row_sum_f32")]] [[kernel]] void row_sum<float, 32, 2>(
    const device float*, device float*, threadgroup float*, uint2, uint, uint);

[[kernel, max_total_threads_per_threadgroup(64)]] void plain_copy(
    const device float* x [[buffer(0)]], device float* y [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  y[i] = x[i];
}
