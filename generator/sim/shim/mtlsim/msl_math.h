// MSL math in namespace metal (and metal::fast, metal::precise, which share the precise
// implementations here). Every function is a constrained template: where the C library
// also declares a non-template overload with the same exact signature (::sqrt(float) via
// <math.h>, ::abs(int)), overload resolution prefers that one, and it computes the same
// thing, so kernels written with `using namespace metal;` never hit ambiguities. half and
// bfloat compute in float and round once, like Metal's float-accurate half functions.
#pragma once
#pragma GCC system_header

#include "mtlsim/msl_vec.h"

namespace metal {

namespace detail {
// The type two different scalar operands meet at: float dominates (MSL has no double),
// then half, then bfloat; integers use the usual C++ rules.
template <class A, class B>
struct common_scalar {
  static constexpr bool any_float = std::is_floating_point_v<A> || std::is_floating_point_v<B>;
  static constexpr bool any_half = std::is_same_v<A, _Float16> || std::is_same_v<B, _Float16>;
  static constexpr bool any_bf = std::is_same_v<A, bfloat> || std::is_same_v<B, bfloat>;
  using type = typename std::conditional_t<
      any_float || (any_half && any_bf), std::type_identity<float>,
      std::conditional_t<any_half, std::type_identity<_Float16>,
                         std::conditional_t<any_bf, std::type_identity<bfloat>,
                                            std::common_type<A, B>>>>::type;
};
template <class A, class B>
using common_scalar_t = typename common_scalar<A, B>::type;
}  // namespace detail

// ---- one-argument float functions: scalar and vector forms ----
#define MTLSIM_MATH1(name, expr)                                  \
  template <msl_float T>                                          \
  inline T name(T x_) {                                           \
    const float x = float(x_);                                    \
    return T(expr);                                               \
  }                                                               \
  template <msl_float T, int N>                                   \
  inline vec<T, N> name(const vec<T, N>& v) {                     \
    return vec_map(v, [](T e) { return name(e); });               \
  }
MTLSIM_MATH1(exp, __builtin_expf(x))
MTLSIM_MATH1(exp2, __builtin_exp2f(x))
MTLSIM_MATH1(exp10, __builtin_powf(10.0f, x))
MTLSIM_MATH1(log, __builtin_logf(x))
MTLSIM_MATH1(log2, __builtin_log2f(x))
MTLSIM_MATH1(log10, __builtin_log10f(x))
MTLSIM_MATH1(sqrt, __builtin_sqrtf(x))
MTLSIM_MATH1(rsqrt, 1.0f / __builtin_sqrtf(x))
MTLSIM_MATH1(sin, __builtin_sinf(x))
MTLSIM_MATH1(cos, __builtin_cosf(x))
MTLSIM_MATH1(tan, __builtin_tanf(x))
MTLSIM_MATH1(asin, __builtin_asinf(x))
MTLSIM_MATH1(acos, __builtin_acosf(x))
MTLSIM_MATH1(atan, __builtin_atanf(x))
MTLSIM_MATH1(sinh, __builtin_sinhf(x))
MTLSIM_MATH1(cosh, __builtin_coshf(x))
MTLSIM_MATH1(tanh, __builtin_tanhf(x))
MTLSIM_MATH1(floor, __builtin_floorf(x))
MTLSIM_MATH1(ceil, __builtin_ceilf(x))
MTLSIM_MATH1(round, __builtin_roundf(x))
MTLSIM_MATH1(rint, __builtin_rintf(x))
MTLSIM_MATH1(trunc, __builtin_truncf(x))
MTLSIM_MATH1(fabs, __builtin_fabsf(x))
MTLSIM_MATH1(fract, __builtin_fminf(x - __builtin_floorf(x), 0x1.fffffep-1f))
MTLSIM_MATH1(saturate, __builtin_fminf(__builtin_fmaxf(x, 0.0f), 1.0f))
MTLSIM_MATH1(sign, x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x)  // keeps ±0 and NaN
MTLSIM_MATH1(acosh, __builtin_acoshf(x))
MTLSIM_MATH1(asinh, __builtin_asinhf(x))
MTLSIM_MATH1(atanh, __builtin_atanhf(x))
MTLSIM_MATH1(cospi, __builtin_cosf(x * 3.14159265358979323846f))
MTLSIM_MATH1(sinpi, __builtin_sinf(x * 3.14159265358979323846f))
MTLSIM_MATH1(tanpi, __builtin_tanf(x * 3.14159265358979323846f))
MTLSIM_MATH1(logb, __builtin_logbf(x))
#undef MTLSIM_MATH1

// ---- two-argument float functions: (s, s), (v, v) ----
#define MTLSIM_MATH2(name, expr)                                  \
  template <msl_float T>                                          \
  inline T name(T x_, T y_) {                                     \
    const float x = float(x_), y = float(y_);                     \
    return T(expr);                                               \
  }                                                               \
  template <msl_float T, int N>                                   \
  inline vec<T, N> name(const vec<T, N>& a, const vec<T, N>& b) { \
    return vec_map(a, b, [](T x, T y) { return name(x, y); });    \
  }
MTLSIM_MATH2(pow, __builtin_powf(x, y))
MTLSIM_MATH2(powr, __builtin_powf(x, y))
MTLSIM_MATH2(atan2, __builtin_atan2f(x, y))
MTLSIM_MATH2(fmod, __builtin_fmodf(x, y))
MTLSIM_MATH2(copysign, __builtin_copysignf(x, y))
MTLSIM_MATH2(fdim, __builtin_fdimf(x, y))
MTLSIM_MATH2(divide, x / y)
#undef MTLSIM_MATH2

// ---- min / max / clamp: all scalar types; floats use fmin/fmax (a NaN operand is ignored) ----
template <msl_scalar T>
inline T fmax(T a, T b) {
  if constexpr (msl_float<T>) return T(__builtin_fmaxf(float(a), float(b)));
  else return a < b ? b : a;
}
template <msl_scalar T>
inline T fmin(T a, T b) {
  if constexpr (msl_float<T>) return T(__builtin_fminf(float(a), float(b)));
  else return b < a ? b : a;
}
template <msl_scalar T>
inline T max(T a, T b) { return fmax(a, b); }
template <msl_scalar T>
inline T min(T a, T b) { return fmin(a, b); }

// Mixed scalar operands (max(x, 0), max(h, 0.0f)) meet at detail::common_scalar_t.
#define MTLSIM_MIXED2(name)                                                            \
  template <msl_scalar A, msl_scalar B>                                                \
    requires(!std::is_same_v<A, B>)                                                    \
  inline detail::common_scalar_t<A, B> name(A a, B b) {                                \
    using C = detail::common_scalar_t<A, B>;                                           \
    return name(C(a), C(b));                                                           \
  }
MTLSIM_MIXED2(max)
MTLSIM_MIXED2(min)
MTLSIM_MIXED2(fmax)
MTLSIM_MIXED2(fmin)
#undef MTLSIM_MIXED2

// Vector forms: (v, v) and (v, scalar broadcast).
#define MTLSIM_VEC2(name)                                                               \
  template <msl_scalar T, int N>                                                        \
  inline vec<T, N> name(const vec<T, N>& a, const vec<T, N>& b) {                       \
    return vec_map(a, b, [](T x, T y) { return name(x, y); });                          \
  }                                                                                     \
  template <msl_scalar T, int N, msl_scalar S>                                          \
  inline vec<T, N> name(const vec<T, N>& a, S s) {                                      \
    return vec_map(a, [s](T x) { return name(x, T(s)); });                              \
  }
MTLSIM_VEC2(max)
MTLSIM_VEC2(min)
MTLSIM_VEC2(fmax)
MTLSIM_VEC2(fmin)
#undef MTLSIM_VEC2

template <msl_scalar T>
inline T clamp(T x, T lo, T hi) { return min(max(x, lo), hi); }
template <msl_scalar A, msl_scalar B, msl_scalar C>
  requires(!(std::is_same_v<A, B> && std::is_same_v<A, C>))
inline A clamp(A x, B lo, C hi) { return clamp(x, A(lo), A(hi)); }
template <msl_scalar T, int N>
inline vec<T, N> clamp(const vec<T, N>& x, const vec<T, N>& lo, const vec<T, N>& hi) {
  vec<T, N> r;
  for (int i = 0; i < N; ++i) r[i] = clamp(x[i], lo[i], hi[i]);
  return r;
}
template <msl_scalar T, int N, msl_scalar S>
inline vec<T, N> clamp(const vec<T, N>& x, S lo, S hi) {
  return vec_map(x, [lo, hi](T e) { return clamp(e, T(lo), T(hi)); });
}

template <msl_scalar T>
inline T abs(T x) {
  if constexpr (msl_float<T>) return T(__builtin_fabsf(float(x)));
  else if constexpr (std::is_signed_v<T>) return x < 0 ? T(-x) : x;
  else return x;
}
template <msl_scalar T, int N>
inline vec<T, N> abs(const vec<T, N>& v) { return vec_map(v, [](T e) { return abs(e); }); }

// ---- three-argument and geometric functions ----
template <msl_float T>
inline T fma(T a, T b, T c) { return T(__builtin_fmaf(float(a), float(b), float(c))); }
template <msl_float T, int N>
inline vec<T, N> fma(const vec<T, N>& a, const vec<T, N>& b, const vec<T, N>& c) {
  vec<T, N> r;
  for (int i = 0; i < N; ++i) r[i] = fma(a[i], b[i], c[i]);
  return r;
}
template <msl_float T>
inline T mix(T x, T y, T a) { return T(float(x) + (float(y) - float(x)) * float(a)); }
template <msl_float T, int N>
inline vec<T, N> mix(const vec<T, N>& x, const vec<T, N>& y, const vec<T, N>& a) {
  vec<T, N> r;
  for (int i = 0; i < N; ++i) r[i] = mix(x[i], y[i], a[i]);
  return r;
}
template <msl_float T, int N, msl_scalar S>
inline vec<T, N> mix(const vec<T, N>& x, const vec<T, N>& y, S a) {
  return mix(x, y, vec<T, N>(T(a)));
}
template <msl_float T>
inline T step(T edge, T x) { return x < edge ? T(0.0f) : T(1.0f); }
template <msl_float T, int N>
inline vec<T, N> step(const vec<T, N>& edge, const vec<T, N>& x) {
  return vec_map(edge, x, [](T e, T v) { return step(e, v); });
}
template <msl_float T>
inline T smoothstep(T e0, T e1, T x) {
  const float t = __builtin_fminf(__builtin_fmaxf((float(x) - float(e0)) / (float(e1) - float(e0)), 0.0f), 1.0f);
  return T(t * t * (3.0f - 2.0f * t));
}
template <msl_float T>
inline T sincos(T x, T& cosval) {
  cosval = cos(x);
  return sin(x);
}

template <msl_float T, int N>
inline T dot(const vec<T, N>& a, const vec<T, N>& b) {
  float s = 0.0f;
  for (int i = 0; i < N; ++i) s += float(a[i]) * float(b[i]);
  return T(s);
}
template <msl_float T, int N>
inline T length_squared(const vec<T, N>& a) { return dot(a, a); }
template <msl_float T, int N>
inline T length(const vec<T, N>& a) { return T(__builtin_sqrtf(float(dot(a, a)))); }
template <msl_float T, int N>
inline T distance(const vec<T, N>& a, const vec<T, N>& b) { return length(a - b); }
template <msl_float T, int N>
inline vec<T, N> normalize(const vec<T, N>& a) {
  const float inv = 1.0f / __builtin_sqrtf(float(dot(a, a)));
  return vec_map(a, [inv](T e) { return T(float(e) * inv); });
}
template <msl_float T>
inline vec<T, 3> cross(const vec<T, 3>& a, const vec<T, 3>& b) {
  return vec<T, 3>(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}

// ---- classification: bool for scalars, bool vectors for vectors ----
#define MTLSIM_CLASSIFY(name, expr)                                          \
  template <msl_float T>                                                     \
  inline bool name(T x_) {                                                   \
    const float x = float(x_);                                               \
    return expr;                                                             \
  }                                                                          \
  template <msl_float T, int N>                                              \
  inline vec<bool, N> name(const vec<T, N>& v) {                             \
    return vec_map(v, [](T e) { return name(e); });                          \
  }
MTLSIM_CLASSIFY(isnan, __builtin_isnan(x))
MTLSIM_CLASSIFY(isinf, __builtin_isinf(x))
MTLSIM_CLASSIFY(isfinite, __builtin_isfinite(x))
MTLSIM_CLASSIFY(signbit, __builtin_signbit(x))
#undef MTLSIM_CLASSIFY

// select(a, b, c): c ? b : a, per component for vectors.
template <class T>
  requires msl_scalar<T>
inline T select(T a, T b, bool c) { return c ? b : a; }
template <class T, int N>
inline vec<T, N> select(const vec<T, N>& a, const vec<T, N>& b, const vec<bool, N>& c) {
  vec<T, N> r;
  for (int i = 0; i < N; ++i) r[i] = c[i] ? b[i] : a[i];
  return r;
}
template <class T, int N>
inline vec<T, N> select(const vec<T, N>& a, const vec<T, N>& b, bool c) { return c ? b : a; }

// ---- integer bit functions ----
template <class T>
  requires is_msl_int_v<T>
inline T popcount(T x) { return T(__builtin_popcountll(std::make_unsigned_t<T>(x))); }
template <class T>
  requires is_msl_int_v<T>
inline T clz(T x) {
  using U = std::make_unsigned_t<T>;
  return x == 0 ? T(sizeof(T) * 8) : T(__builtin_clzll(U(x)) - (64 - sizeof(T) * 8));
}
template <class T>
  requires is_msl_int_v<T>
inline T ctz(T x) { return x == 0 ? T(sizeof(T) * 8) : T(__builtin_ctzll(std::make_unsigned_t<T>(x))); }

// as_type<T>(x): reinterpret the bits; sizes must match (float3 is 16 bytes, as in Metal).
template <class T, class U>
inline T as_type(const U& u) {
  static_assert(sizeof(T) == sizeof(U), "as_type requires types of equal size");
  return __builtin_bit_cast(T, u);
}

// metal::fast / metal::precise: same functions; the simulator always computes precisely.
#define MTLSIM_MATH_NAMESPACE(ns)                                                              \
  namespace ns {                                                                               \
  using metal::exp; using metal::exp2; using metal::exp10; using metal::log; using metal::log2; \
  using metal::log10; using metal::sqrt; using metal::rsqrt; using metal::sin; using metal::cos; \
  using metal::tan; using metal::asin; using metal::acos; using metal::atan; using metal::sinh; \
  using metal::cosh; using metal::tanh; using metal::floor; using metal::ceil; using metal::round; \
  using metal::rint; using metal::trunc; using metal::fabs; using metal::fract; using metal::saturate; \
  using metal::sign; using metal::pow; using metal::powr; using metal::atan2; using metal::fmod; \
  using metal::copysign; using metal::fdim; using metal::divide; using metal::fmax; using metal::fmin; \
  using metal::max; using metal::min; using metal::clamp; using metal::abs; using metal::fma; \
  using metal::mix; using metal::step; using metal::smoothstep; using metal::sincos; using metal::dot; \
  using metal::length; using metal::length_squared; using metal::distance; using metal::normalize; \
  using metal::cross; using metal::isnan; using metal::isinf; using metal::isfinite; using metal::signbit; \
  }
MTLSIM_MATH_NAMESPACE(fast)
MTLSIM_MATH_NAMESPACE(precise)
#undef MTLSIM_MATH_NAMESPACE

}  // namespace metal
