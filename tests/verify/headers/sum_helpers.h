// A helper in a local header that reads all 32 partials: findings inside it name this file.
#pragma once
#include <metal_stdlib>
using namespace metal;

inline float sum_partials(threadgroup const float* partials, uint lane) {
  return simd_sum(partials[lane]);
}
