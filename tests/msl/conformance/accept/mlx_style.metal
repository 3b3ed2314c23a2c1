// MLX style: a templated kernel instantiated with host_name macros, an argument struct with
// 64-bit fields, separate `constant T&` scalars, a threadgroup array in the body, SIMD-group
// reductions, helpers in a local header, an unrolled loop.
#include <metal_stdlib>
#include "mlx_utils.h"
using namespace metal;

struct RmsArgs {
  int64_t row_stride;
  uint64_t n;
  float eps;
};

template <typename T>
[[kernel]] void rms_norm(
    device const T* x [[buffer(0)]],
    device const T* w [[buffer(1)]],
    device T* out [[buffer(2)]],
    constant RmsArgs& args [[buffer(3)]],
    constant float& eps [[buffer(4)]],
    uint gid [[threadgroup_position_in_grid]],
    uint lid [[thread_position_in_threadgroup]],
    uint tg_size [[threads_per_threadgroup]],
    ushort simd_lane [[thread_index_in_simdgroup]],
    ushort simd_group [[simdgroup_index_in_threadgroup]]) {
  threadgroup float local_sums[SIMD_SIZE];
  device const T* row = x + gid * args.row_stride;
  float acc = sum_of_squares(row, uint(args.n), lid, tg_size);
  accumulate(acc, 0.0f);
  acc = simd_sum(acc);
  if (simd_lane == 0) local_sums[simd_group] = acc;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (simd_group == 0) {
    acc = simd_sum(simd_lane < tg_size / SIMD_SIZE ? local_sums[simd_lane] : 0.0f);
    if (simd_lane == 0) local_sums[0] = acc;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  const float scale = rsqrt(local_sums[0] / float(args.n) + eps + args.eps);
  _Pragma("unroll")
  for (uint i = lid; i < args.n; i += tg_size) {
    out[gid * args.row_stride + i] = static_cast<T>(float(row[i]) * scale * float(w[i]));
  }
}

#define instantiate_rms(name, type) \
  template [[host_name("rms_" #name)]] [[kernel]] decltype(rms_norm<type>) rms_norm<type>;

instantiate_rms(float32, float)
instantiate_rms(float16, half)
instantiate_rms(bfloat16, bfloat)
