// rms_norm over rows: per row, each thread sums squares of its strided elements, simd_sum,
// partials through threadgroup memory, barrier, simd_sum of partials, barrier, scale. The
// threadgroup sum is an MLX-style helper whose sync points all sit at its top level (as the shipped
// kernels' tg_sum), so the simulator's front end runs it as loops (docs/simulator.md).
#include <metal_stdlib>
using namespace metal;

template <uint TG>
float tg_sum(float v, threadgroup float* partial, uint lane, uint sg) {
  v = simd_sum(v);
  if (lane == 0) partial[sg] = v;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  v = lane < TG / 32 ? partial[lane] : 0.0f;
  v = simd_sum(v);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  return v;
}

template <typename T, uint TG>
[[kernel]] void rms_norm(device const T* x [[buffer(0)]],
                         device const T* w [[buffer(1)]],
                         device T* y [[buffer(2)]],
                         constant uint& n [[buffer(3)]],
                         constant float& eps [[buffer(4)]],
                         threadgroup float* partial [[threadgroup(0)]],
                         uint row [[threadgroup_position_in_grid]],
                         uint tid [[thread_position_in_threadgroup]],
                         uint lane [[thread_index_in_simdgroup]],
                         uint sg [[simdgroup_index_in_threadgroup]]) {
  device const T* xr = x + size_t(row) * n;
  device T* yr = y + size_t(row) * n;
  float acc = 0.0f;
  for (uint i = tid; i < n; i += TG) {
    const float v = float(xr[i]);
    acc += v * v;
  }
  acc = tg_sum<TG>(acc, partial, lane, sg);
  const float inv = rsqrt(acc / float(n) + eps);
  for (uint i = tid; i < n; i += TG) yr[i] = T(float(xr[i]) * inv * float(w[i]));
}

template [[host_name("rms_norm_f32_tg512")]] [[kernel]] void rms_norm<float, 512>(
    device const float* x [[buffer(0)]], device const float* w [[buffer(1)]],
    device float* y [[buffer(2)]], constant uint& n [[buffer(3)]], constant float& eps [[buffer(4)]],
    threadgroup float* partial [[threadgroup(0)]], uint row [[threadgroup_position_in_grid]],
    uint tid [[thread_position_in_threadgroup]], uint lane [[thread_index_in_simdgroup]],
    uint sg [[simdgroup_index_in_threadgroup]]);
