// The rest of MSL's <metal_math>, <metal_common>, <metal_relational> and <metal_geometric> beside
// msl_math.h: three-operand min/max/median, frexp/ldexp/modf, nextafter, mixed scalar-vector
// min/max (fmax(0, v) as kernels write it), isordered & co., and reflect/refract/faceforward.
// half and bfloat compute in float and round once, as in msl_math.h.
#pragma once
#pragma GCC system_header

#include "mtlsim/msl_math.h"

namespace metal {

// acosh, asinh, atanh, cospi, sinpi, tanpi and logb: msl_math.h's one-argument list.

// ---- double arguments: Metal has no double, but unsuffixed literals make expressions double
// (ggml: floor(v * 0.0625)); they compute in float and return float. Templates, so that where a
// TU also has <cmath>, its ::floor(double) is preferred instead of being ambiguous ----
#define MTLSIM_DOUBLE1(name)                   \
  template <class D>                           \
    requires std::is_same_v<D, double>         \
  inline float name(D x) { return name(float(x)); }
MTLSIM_DOUBLE1(exp) MTLSIM_DOUBLE1(exp2) MTLSIM_DOUBLE1(exp10) MTLSIM_DOUBLE1(log) MTLSIM_DOUBLE1(log2)
MTLSIM_DOUBLE1(log10) MTLSIM_DOUBLE1(sqrt) MTLSIM_DOUBLE1(rsqrt) MTLSIM_DOUBLE1(sin) MTLSIM_DOUBLE1(cos)
MTLSIM_DOUBLE1(tan) MTLSIM_DOUBLE1(asin) MTLSIM_DOUBLE1(acos) MTLSIM_DOUBLE1(atan) MTLSIM_DOUBLE1(sinh)
MTLSIM_DOUBLE1(cosh) MTLSIM_DOUBLE1(tanh) MTLSIM_DOUBLE1(floor) MTLSIM_DOUBLE1(ceil) MTLSIM_DOUBLE1(round)
MTLSIM_DOUBLE1(rint) MTLSIM_DOUBLE1(trunc) MTLSIM_DOUBLE1(fabs) MTLSIM_DOUBLE1(fract) MTLSIM_DOUBLE1(saturate)
MTLSIM_DOUBLE1(sign) MTLSIM_DOUBLE1(acosh) MTLSIM_DOUBLE1(asinh) MTLSIM_DOUBLE1(atanh) MTLSIM_DOUBLE1(cospi)
MTLSIM_DOUBLE1(sinpi) MTLSIM_DOUBLE1(tanpi)
#undef MTLSIM_DOUBLE1

// ---- three operands ----
template <msl_scalar T>
inline T fmax3(T a, T b, T c) { return fmax(fmax(a, b), c); }
template <msl_scalar T>
inline T fmin3(T a, T b, T c) { return fmin(fmin(a, b), c); }
template <msl_scalar T>
inline T fmedian3(T a, T b, T c) { return fmax(fmin(a, b), fmin(fmax(a, b), c)); }
template <msl_scalar T>
inline T max3(T a, T b, T c) { return fmax3(a, b, c); }
template <msl_scalar T>
inline T min3(T a, T b, T c) { return fmin3(a, b, c); }
template <msl_scalar T>
inline T median3(T a, T b, T c) { return fmedian3(a, b, c); }
#define MTLSIM_VEC3(name)                                                                        \
  template <msl_scalar T, int N>                                                                 \
  inline vec<T, N> name(const vec<T, N>& a, const vec<T, N>& b, const vec<T, N>& c) {            \
    vec<T, N> r;                                                                                 \
    for (int i = 0; i < N; ++i) r[i] = name(a[i], b[i], c[i]);                                   \
    return r;                                                                                    \
  }
MTLSIM_VEC3(fmax3)
MTLSIM_VEC3(fmin3)
MTLSIM_VEC3(fmedian3)
MTLSIM_VEC3(max3)
MTLSIM_VEC3(min3)
MTLSIM_VEC3(median3)
#undef MTLSIM_VEC3

// ---- scalar first, vector second: fmax(0, v), min(1.0f, v) ----
#define MTLSIM_SCALAR_VEC(name)                                                    \
  template <msl_scalar S, msl_scalar T, int N>                                     \
  inline vec<T, N> name(S s, const vec<T, N>& b) {                                 \
    return vec_map(b, [s](T y) { return name(T(s), y); });                         \
  }
MTLSIM_SCALAR_VEC(max)
MTLSIM_SCALAR_VEC(min)
MTLSIM_SCALAR_VEC(fmax)
MTLSIM_SCALAR_VEC(fmin)
#undef MTLSIM_SCALAR_VEC

// ---- mixed scalar operands of two-argument functions (copysign(bfloat, float)): they meet at
// detail::common_scalar_t, as min/max do in msl_math.h ----
#define MTLSIM_MIXED2(name)                                                    \
  template <msl_scalar A, msl_scalar B>                                        \
    requires(!std::is_same_v<A, B> && (msl_float<A> || msl_float<B>))          \
  inline detail::common_scalar_t<A, B> name(A a, B b) {                        \
    using C = detail::common_scalar_t<A, B>;                                   \
    return name(C(a), C(b));                                                   \
  }
MTLSIM_MIXED2(pow)
MTLSIM_MIXED2(powr)
MTLSIM_MIXED2(atan2)
MTLSIM_MIXED2(fmod)
MTLSIM_MIXED2(copysign)
MTLSIM_MIXED2(fdim)
MTLSIM_MIXED2(divide)
#undef MTLSIM_MIXED2

// ---- exponent and representation ----
template <msl_float T>
inline T frexp(T x, int& exponent) { return T(__builtin_frexpf(float(x), &exponent)); }
template <msl_float T>
inline T ldexp(T x, int k) { return T(__builtin_ldexpf(float(x), k)); }
template <msl_float T>
inline T modf(T x, T& whole) {
  float w = 0.0f;
  const float f = __builtin_modff(float(x), &w);
  whole = T(w);
  return T(f);
}
template <msl_float T>
inline int ilogb(T x) { return __builtin_ilogbf(float(x)); }
// nextafter steps in T's own precision (half and bfloat have their own neighbours).
template <msl_float T>
inline T nextafter(T x, T y) {
  if constexpr (std::is_same_v<T, float>) {
    return __builtin_nextafterf(x, y);
  } else {
    if (x != x || y != y) return T(__builtin_nanf(""));
    if (x == y) return y;
    uint16_t b = __builtin_bit_cast(uint16_t, x);
    if ((b & 0x7fffu) == 0) return __builtin_bit_cast(T, uint16_t((y > x ? 0x0000u : 0x8000u) | 1u));
    const bool away = (x < y) == !(b & 0x8000u);
    b = uint16_t(away ? b + 1 : b - 1);
    return __builtin_bit_cast(T, b);
  }
}

// ---- relational ----
template <msl_float T>
inline bool isordered(T x, T y) { return float(x) == float(x) && float(y) == float(y); }
template <msl_float T>
inline bool isunordered(T x, T y) { return !isordered(x, y); }
template <msl_float T>
inline bool isnormal(T x) {
  if constexpr (std::is_same_v<T, float>) return __builtin_isnormal(x);
  else return isfinite(x) && float(abs(x)) >= float(numeric_limits<T>::min());
}
template <int N>
inline vec<bool, N> not_(const vec<bool, N>& v) { return !v; }  // `not` is a C++ keyword

// ---- geometric ----
template <msl_float T, int N>
inline vec<T, N> faceforward(const vec<T, N>& n, const vec<T, N>& i, const vec<T, N>& nref) {
  return float(dot(nref, i)) < 0.0f ? n : -n;
}
template <msl_float T, int N>
inline vec<T, N> reflect(const vec<T, N>& i, const vec<T, N>& n) {
  return i - n * T(2.0f * float(dot(n, i)));
}
template <msl_float T, int N, msl_scalar S>
inline vec<T, N> refract(const vec<T, N>& i, const vec<T, N>& n, S eta_) {
  const float eta = float(eta_), d = float(dot(n, i)), k = 1.0f - eta * eta * (1.0f - d * d);
  if (k < 0.0f) return vec<T, N>(T(0));
  return i * T(eta) - n * T(eta * d + __builtin_sqrtf(k));
}

#define MTLSIM_MATH_NAMESPACE(ns)                                                                     \
  namespace ns {                                                                                      \
  using metal::acosh; using metal::asinh; using metal::atanh; using metal::cospi; using metal::sinpi; \
  using metal::tanpi; using metal::logb; using metal::fmax3; using metal::fmin3; using metal::fmedian3; \
  using metal::max3; using metal::min3; using metal::median3; using metal::frexp; using metal::ldexp; \
  using metal::modf; using metal::ilogb; using metal::nextafter; using metal::isordered;            \
  using metal::isunordered; using metal::isnormal; using metal::faceforward; using metal::reflect;  \
  using metal::refract;                                                                             \
  }
MTLSIM_MATH_NAMESPACE(fast)
MTLSIM_MATH_NAMESPACE(precise)
#undef MTLSIM_MATH_NAMESPACE

}  // namespace metal
