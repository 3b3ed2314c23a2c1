// Kernel templates kept in a header, as MLX does (softmax.h).
#pragma once
#include <metal_stdlib>
using namespace metal;

constexpr int SIMD_SIZE = 32;

template <typename T>
struct Limits {
  static constexpr T lowest() { return metal::numeric_limits<T>::lowest(); }
};

template <typename T, typename AccT = float, int N_READS = 4>
[[kernel]] void softmax_single_row(
    const device T* in,
    device T* out,
    constant int& axis_size,
    uint gid [[threadgroup_position_in_grid]],
    uint lid [[thread_position_in_threadgroup]],
    uint simd_lane_id [[thread_index_in_simdgroup]],
    uint simd_group_id [[simdgroup_index_in_threadgroup]]) {
  threadgroup AccT local_max[SIMD_SIZE];
  threadgroup AccT local_normalizer[SIMD_SIZE];
  in += gid * size_t(axis_size);
  out += gid * size_t(axis_size);
  AccT maxval = Limits<AccT>::lowest();
  for (int i = lid * N_READS; i < axis_size; i += 1024 * N_READS) {
    maxval = max(maxval, AccT(in[i]));
  }
  maxval = simd_max(maxval);
  if (simd_lane_id == 0) local_max[simd_group_id] = maxval;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  maxval = local_max[0];
  AccT normalizer = 0;
  for (int i = lid; i < axis_size; i += 1024) normalizer += exp(AccT(in[i]) - maxval);
  normalizer = simd_sum(normalizer);
  if (simd_lane_id == 0) local_normalizer[simd_group_id] = normalizer;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  normalizer = 1 / local_normalizer[0];
  for (int i = lid; i < axis_size; i += 1024) out[i] = T(exp(AccT(in[i]) - maxval) * normalizer);
}
