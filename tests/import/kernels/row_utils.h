// Helpers shared by the row kernels (a local header, as MLX keeps its utils.h).
#pragma once
#include <metal_stdlib>
using namespace metal;

constant constexpr int kSimdWidth = 32;

// The accumulation type of a storage type: half and bfloat rows add up in float.
template <typename T>
struct accum_of {
  using type = float;
};

// Sum of `value` over the whole threadgroup. `scratch` holds one float per simdgroup.
inline float threadgroup_total(float value, threadgroup float* scratch, uint lane, uint group, uint groups) {
  value = simd_sum(value);
  if (lane == 0) {
    scratch[group] = value;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  float total = lane < groups ? scratch[lane] : 0.0f;
  total = simd_sum(total);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  return total;
}
