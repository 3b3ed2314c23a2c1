// What Apple's own headers define that kernels call directly: METAL_FUNC, the fast-math mode
// words, the __metal_* builtins (MLX's bf16_math.h forwards to them), metal::uniform, metal::array,
// remove_addrspace_t, thread_scope and atomic_thread_fence. The builtins forward to the shim's
// functions; the simd ones stay collectives of the caller's simdgroup.
#pragma once
#pragma GCC system_header

#include <atomic>
#include <cstddef>
#include <tuple>
#include <utility>

#include "mtlsim/msl_atomic.h"
#include "mtlsim/msl_math_ext.h"
#include "mtlsim/msl_simd.h"

// Apple's is always_inline; plain inline keeps g++ from refusing a call it cannot inline (-O0,
// recursion) and means the same to the program.
#ifndef METAL_FUNC
#define METAL_FUNC inline
#endif
// The math-mode operand of the __metal_* math builtins: the simulator always computes precisely.
#define __METAL_FAST_MATH__ 1
#define __METAL_PRECISE_MATH__ 0
#define __METAL_MAYBE_FAST_MATH__ 0
#define __METAL_MEMORY_SCOPE_SYSTEM__ 4

#define MTLSIM_BUILTIN(arity, name)                                     \
  template <class... A>                                                 \
  inline auto __metal_##name(A... a) {                                  \
    return mtlsim::detail::call_first<arity>(                           \
        [](auto... x) { return metal::name(x...); }, a...);             \
  }

namespace mtlsim::detail {
// f applied to the first N of args (the rest is the math-mode operand).
template <size_t N, class F, class... A>
inline auto call_first(F f, A... a) {
  const auto t = std::make_tuple(a...);
  return [&]<size_t... I>(std::index_sequence<I...>) { return f(std::get<I>(t)...); }(std::make_index_sequence<N>());
}
}  // namespace mtlsim::detail

MTLSIM_BUILTIN(1, fabs) MTLSIM_BUILTIN(1, acos) MTLSIM_BUILTIN(1, acosh) MTLSIM_BUILTIN(1, asin)
MTLSIM_BUILTIN(1, asinh) MTLSIM_BUILTIN(1, atan) MTLSIM_BUILTIN(2, atan2) MTLSIM_BUILTIN(1, atanh)
MTLSIM_BUILTIN(1, ceil) MTLSIM_BUILTIN(1, cos) MTLSIM_BUILTIN(1, cosh) MTLSIM_BUILTIN(1, cospi)
MTLSIM_BUILTIN(2, divide) MTLSIM_BUILTIN(1, exp) MTLSIM_BUILTIN(1, exp10) MTLSIM_BUILTIN(1, exp2)
MTLSIM_BUILTIN(1, floor) MTLSIM_BUILTIN(3, fma) MTLSIM_BUILTIN(2, fmax) MTLSIM_BUILTIN(3, fmax3)
MTLSIM_BUILTIN(3, fmedian3) MTLSIM_BUILTIN(2, fmin) MTLSIM_BUILTIN(3, fmin3) MTLSIM_BUILTIN(2, fmod)
MTLSIM_BUILTIN(1, fract) MTLSIM_BUILTIN(2, ldexp) MTLSIM_BUILTIN(1, log) MTLSIM_BUILTIN(1, log10)
MTLSIM_BUILTIN(1, log2) MTLSIM_BUILTIN(2, nextafter) MTLSIM_BUILTIN(2, pow) MTLSIM_BUILTIN(2, powr)
MTLSIM_BUILTIN(1, rint) MTLSIM_BUILTIN(1, round) MTLSIM_BUILTIN(1, rsqrt) MTLSIM_BUILTIN(1, sin)
MTLSIM_BUILTIN(1, sinh) MTLSIM_BUILTIN(1, sinpi) MTLSIM_BUILTIN(1, sqrt) MTLSIM_BUILTIN(1, tan)
MTLSIM_BUILTIN(1, tanh) MTLSIM_BUILTIN(1, tanpi) MTLSIM_BUILTIN(1, trunc)
#undef MTLSIM_BUILTIN

template <class T>
inline T __metal_frexp(T x, int* exponent) { return metal::frexp(x, *exponent); }

// ---- simd builtins: the caller's line travels on so reports name it ----
#define MTLSIM_SIMD_BUILTIN1(name) \
  template <class T>               \
  inline T __metal_##name(T x, int line = __builtin_LINE()) { return metal::name(x, line); }
#define MTLSIM_SIMD_BUILTIN2(name) \
  template <class T>               \
  inline T __metal_##name(T x, ushort k, int line = __builtin_LINE()) { return metal::name(x, k, line); }
MTLSIM_SIMD_BUILTIN1(simd_sum) MTLSIM_SIMD_BUILTIN1(simd_product) MTLSIM_SIMD_BUILTIN1(simd_max)
MTLSIM_SIMD_BUILTIN1(simd_min) MTLSIM_SIMD_BUILTIN1(simd_and) MTLSIM_SIMD_BUILTIN1(simd_or)
MTLSIM_SIMD_BUILTIN1(simd_xor) MTLSIM_SIMD_BUILTIN1(simd_broadcast_first)
MTLSIM_SIMD_BUILTIN1(simd_prefix_inclusive_sum) MTLSIM_SIMD_BUILTIN1(simd_prefix_exclusive_sum)
MTLSIM_SIMD_BUILTIN1(simd_prefix_inclusive_product) MTLSIM_SIMD_BUILTIN1(simd_prefix_exclusive_product)
MTLSIM_SIMD_BUILTIN2(simd_shuffle) MTLSIM_SIMD_BUILTIN2(simd_broadcast) MTLSIM_SIMD_BUILTIN2(simd_shuffle_down)
MTLSIM_SIMD_BUILTIN2(simd_shuffle_up) MTLSIM_SIMD_BUILTIN2(simd_shuffle_xor)
MTLSIM_SIMD_BUILTIN2(simd_shuffle_rotate_down) MTLSIM_SIMD_BUILTIN2(simd_shuffle_rotate_up)
#undef MTLSIM_SIMD_BUILTIN1
#undef MTLSIM_SIMD_BUILTIN2
template <class T>
inline T __metal_simd_shuffle_and_fill_down(T data, T fill, ushort delta, ushort modulo, int line = __builtin_LINE()) {
  return metal::simd_shuffle_and_fill_down(data, fill, delta, modulo, line);
}
template <class T>
inline T __metal_simd_shuffle_and_fill_up(T data, T fill, ushort delta, ushort modulo, int line = __builtin_LINE()) {
  return metal::simd_shuffle_and_fill_up(data, fill, delta, modulo, line);
}
// The operand only selects the result type.
template <class T>
inline T __metal_get_simdgroup_size(T) { return T(mtlsim::kSimdWidth); }
template <class T>
inline T __metal_get_thread_index_in_simdgroup(T) {
  return T(mtlsim::detail::current_lane(mtlsim::detail::Op::none, __builtin_LINE()).lane);
}

namespace metal {

// A value the same for every thread (a compiler hint on the GPU).
template <class T>
struct uniform {
  T value;
  uniform() = default;
  constexpr uniform(T v) : value(v) {}
  constexpr operator T() const { return value; }
};
template <class T>
constexpr uniform<T> make_uniform(T v) { return uniform<T>(v); }

template <class T, size_t N>
struct array {
  T elems_[N];
  T& operator[](size_t i) { return elems_[i]; }
  const T& operator[](size_t i) const { return elems_[i]; }
  static constexpr size_t size() { return N; }
};

// Address spaces are empty words here, so removing one changes nothing.
template <class T>
struct remove_addrspace { using type = T; };
template <class T>
using remove_addrspace_t = typename remove_addrspace<T>::type;

enum thread_scope { thread_scope_thread = 0, thread_scope_simdgroup = 1, thread_scope_threadgroup = 2, thread_scope_device = 3 };

// Threadgroups run on several OS threads, so a fence is a real one.
inline void atomic_thread_fence(mem_flags, memory_order o, thread_scope = thread_scope_threadgroup) {
  std::atomic_thread_fence(detail::to_std(o));
}

}  // namespace metal
