// Overloads of simd_max in another file than the kernel that calls it (MLX's bf16_math.h beside
// softmax.h): loop_form_test.cpp, DependentSimdCallsBesideAUsersOverload.
#pragma once

struct wide_t {
  float v;
};

#ifdef FRIEND_OVERLOAD
struct narrow_t {
  float v;
  friend narrow_t simd_max(narrow_t x) { return narrow_t{simd_max(x.v)}; }  // found by argument-dependent lookup
};
#endif

namespace metal {
inline wide_t simd_max(wide_t x) { return wide_t{simd_max(x.v)}; }
#ifdef HALF_OVERLOAD
inline half simd_max(half x) { return x; }  // clang's canonical spelling is __fp16, which g++ does not know
#endif
#ifdef TEMPLATE_OVERLOAD
template <typename U>
struct pair_t {
  U a, b;
};
template <typename U>
pair_t<U> simd_max(pair_t<U> p) { return pair_t<U>{simd_max(p.a), simd_max(p.b)}; }
#endif
}  // namespace metal
