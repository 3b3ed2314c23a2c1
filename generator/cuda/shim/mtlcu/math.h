// metal:: math for the CUDA flavour. Every function is a template: where CUDA declares a
// non-template overload of the same name at global scope (max(float, float), exp(float)), an
// exact match picks CUDA's and otherwise metal's, never an ambiguity. half and bfloat compute in
// float and round once, as the simulator does. fast:: and precise:: name the same functions
// (precise results; hardware fast math may differ within tolerance).
#pragma once

#include <type_traits>

#include "mtlcu/vec.h"

namespace mtlcu {

template <class T>
__device__ inline float to_float(T x) {
  return float(x);
}

// Applies a float function to a scalar of any MSL floating type, or to each component.
template <class T, class F>
__device__ inline T apply(T x, F f) {
  if constexpr (metal::is_vec<T>::value) {
    for (int i = 0; i < T::size; ++i) x[i] = apply(x[i], f);
    return x;
  } else {
    return T(f(float(x)));
  }
}

template <class T, class F>
__device__ inline T apply2(T a, T b, F f) {
  if constexpr (metal::is_vec<T>::value) {
    for (int i = 0; i < T::size; ++i) a[i] = apply2(a[i], b[i], f);
    return a;
  } else {
    return T(f(float(a), float(b)));
  }
}

}  // namespace mtlcu

namespace metal {

#define MTLCU_UNARY(name, expr)                                                  \
  template <class T>                                                            \
  __device__ inline T name(T x) {                                               \
    return mtlcu::apply(x, [](float v) { return expr; });                       \
  }
MTLCU_UNARY(rsqrt, ::rsqrtf(v))
MTLCU_UNARY(sqrt, ::sqrtf(v))
MTLCU_UNARY(exp, ::expf(v))
MTLCU_UNARY(exp2, ::exp2f(v))
MTLCU_UNARY(log, ::logf(v))
MTLCU_UNARY(log2, ::log2f(v))
MTLCU_UNARY(fabs, ::fabsf(v))
MTLCU_UNARY(floor, ::floorf(v))
MTLCU_UNARY(ceil, ::ceilf(v))
MTLCU_UNARY(round, ::roundf(v))
MTLCU_UNARY(trunc, ::truncf(v))
MTLCU_UNARY(tanh, ::tanhf(v))
MTLCU_UNARY(sin, ::sinf(v))
MTLCU_UNARY(cos, ::cosf(v))
MTLCU_UNARY(tan, ::tanf(v))
MTLCU_UNARY(erf, ::erff(v))
MTLCU_UNARY(saturate, ::fminf(::fmaxf(v, 0.0f), 1.0f))
MTLCU_UNARY(fract, v - ::floorf(v))
#undef MTLCU_UNARY

#define MTLCU_BINARY(name, expr)                                                 \
  template <class T>                                                            \
  __device__ inline T name(T a, T b) {                                          \
    return mtlcu::apply2(a, b, [](float x, float y) { return expr; });          \
  }
MTLCU_BINARY(pow, ::powf(x, y))
MTLCU_BINARY(powr, ::powf(x, y))
MTLCU_BINARY(fmax, ::fmaxf(x, y))
MTLCU_BINARY(fmin, ::fminf(x, y))
MTLCU_BINARY(atan2, ::atan2f(x, y))
MTLCU_BINARY(copysign, ::copysignf(x, y))
#undef MTLCU_BINARY

// abs, max and min keep integer types integer.
template <class T>
__device__ inline T abs(T x) {
  if constexpr (metal::is_vec<T>::value) {
    for (int i = 0; i < T::size; ++i) x[i] = abs(x[i]);
    return x;
  } else {
    return x < T(0) ? T(-x) : x;
  }
}
template <class T>
__device__ inline T max(T a, T b) {
  if constexpr (metal::is_vec<T>::value) {
    for (int i = 0; i < T::size; ++i) a[i] = max(a[i], b[i]);
    return a;
  } else if constexpr (std::is_integral_v<T>) {
    return a < b ? b : a;
  } else {
    return T(::fmaxf(float(a), float(b)));
  }
}
template <class T>
__device__ inline T min(T a, T b) {
  if constexpr (metal::is_vec<T>::value) {
    for (int i = 0; i < T::size; ++i) a[i] = min(a[i], b[i]);
    return a;
  } else if constexpr (std::is_integral_v<T>) {
    return b < a ? b : a;
  } else {
    return T(::fminf(float(a), float(b)));
  }
}
template <class T>
__device__ inline T clamp(T x, T lo, T hi) {
  return min(max(x, lo), hi);
}
template <class T>
__device__ inline T fma(T a, T b, T c) {
  if constexpr (metal::is_vec<T>::value) {
    for (int i = 0; i < T::size; ++i) a[i] = fma(a[i], b[i], c[i]);
    return a;
  } else {
    return T(::fmaf(float(a), float(b), float(c)));
  }
}
template <class T, class U>
__device__ inline T mix(T a, T b, U t) {
  return a + (b - a) * T(t);
}
template <class T>
__device__ inline bool isnan(T x) {
  return ::isnan(float(x));
}
template <class T>
__device__ inline bool isinf(T x) {
  return ::isinf(float(x));
}
template <class T>
__device__ inline bool isfinite(T x) {
  return ::isfinite(float(x));
}
template <class T>
__device__ inline T select(T a, T b, bool c) {
  return c ? b : a;
}
template <class To, class From>
__device__ inline To as_type(From x) {
  static_assert(sizeof(To) == sizeof(From), "as_type needs types of one size");
  To out;
  __builtin_memcpy(&out, &x, sizeof out);
  return out;
}

namespace fast {
using metal::cos;
using metal::exp;
using metal::exp2;
using metal::log;
using metal::log2;
using metal::max;
using metal::min;
using metal::pow;
using metal::powr;
using metal::rsqrt;
using metal::sin;
using metal::sqrt;
using metal::tanh;
}  // namespace fast
namespace precise = fast;

}  // namespace metal
