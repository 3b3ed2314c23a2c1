// A local header, as MLX keeps its templates in headers: included files are checked too.
#pragma once
#include <metal_stdlib>
using namespace metal;

constant constexpr int SIMD_SIZE = 32;

template <typename T>
inline float sum_of_squares(device const T* x, uint n, uint lid, uint stride) {
  float acc = 0.0f;
  for (uint i = lid; i < n; i += stride) {
    const float v = float(x[i]);
    acc += v * v;
  }
  return acc;
}

inline void accumulate(thread float& acc, float v) { acc += v; }
