// A type of the user's and its overload of simd_max, in another file than the kernel that calls
// simd_max (as MLX's bf16_math.h overloads simd_max for bfloat16_t beside softmax.h):
// overloaded_max.metal, template_loops_test.cpp.
#pragma once

struct wide_t {
  float v;
};

namespace metal {
inline wide_t simd_max(wide_t x) { return wide_t{simd_max(x.v)}; }
}  // namespace metal
