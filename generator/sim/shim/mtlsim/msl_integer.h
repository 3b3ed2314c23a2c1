// MSL's <metal_integer> beyond min/max/clamp/abs/popcount/clz/ctz (msl_math.h): absdiff, addsat,
// subsat, hadd, rhadd, mulhi, madhi, madsat, mul24, mad24, rotate, reverse_bits, extract_bits,
// insert_bits; scalar and vector forms. And <metal_pack>'s unorm/snorm packing.
#pragma once
#pragma GCC system_header

#include "mtlsim/msl_math.h"

namespace metal {

template <class T>
concept msl_int = is_msl_int_v<T>;

namespace detail {
// The type twice as wide as T (for the full-precision forms of products and sums).
template <class T>
using wide_t = std::conditional_t<std::is_signed_v<T>, long long, unsigned long long>;
template <class T>
constexpr T saturate_to(__int128 v) {
  const __int128 lo = __int128(std::numeric_limits<T>::min()), hi = __int128(std::numeric_limits<T>::max());
  return T(v < lo ? lo : v > hi ? hi : v);
}
}  // namespace detail

template <msl_int T>
inline T absdiff(T x, T y) { return x > y ? T(x - y) : T(y - x); }
template <msl_int T>
inline T addsat(T x, T y) { return detail::saturate_to<T>(__int128(x) + __int128(y)); }
template <msl_int T>
inline T subsat(T x, T y) { return detail::saturate_to<T>(__int128(x) - __int128(y)); }
// (x + y) >> 1 and (x + y + 1) >> 1 without intermediate overflow.
template <msl_int T>
inline T hadd(T x, T y) { return T((__int128(x) + __int128(y)) >> 1); }
template <msl_int T>
inline T rhadd(T x, T y) { return T((__int128(x) + __int128(y) + 1) >> 1); }
template <msl_int T>
inline T mulhi(T x, T y) { return T((__int128(x) * __int128(y)) >> (8 * sizeof(T))); }
template <msl_int T>
inline T madhi(T a, T b, T c) { return T(mulhi(a, b) + c); }
template <msl_int T>
inline T madsat(T a, T b, T c) { return detail::saturate_to<T>(__int128(a) * __int128(b) + __int128(c)); }
template <msl_int T>
  requires(sizeof(T) == 4)
inline T mul24(T x, T y) { return T(x * y); }
template <msl_int T>
  requires(sizeof(T) == 4)
inline T mad24(T x, T y, T z) { return T(x * y + z); }
template <msl_int T>
inline T rotate(T v, T i) {
  using U = std::make_unsigned_t<T>;
  constexpr unsigned bits = 8 * sizeof(T);
  const unsigned s = unsigned(U(i)) % bits;
  return s == 0 ? v : T(U(U(v) << s) | U(U(v) >> (bits - s)));
}
template <msl_int T>
inline T reverse_bits(T x) {
  using U = std::make_unsigned_t<T>;
  U u = U(x), r = 0;
  for (unsigned i = 0; i < 8 * sizeof(T); ++i, u >>= 1) r = U((r << 1) | (u & 1u));
  return T(r);
}
// Bits [offset, offset + bits) of x, sign-extended for signed T.
template <msl_int T>
inline T extract_bits(T x, uint offset, uint bits) {
  if (bits == 0) return T(0);
  constexpr uint width = 8 * sizeof(T);
  using W = std::conditional_t<std::is_signed_v<T>, long long, unsigned long long>;
  const W shifted = W(W(x) << (64 - width) << (width - offset - bits));
  return T(shifted >> (64 - bits));
}
template <msl_int T>
inline T insert_bits(T base, T insert, uint offset, uint bits) {
  using U = std::make_unsigned_t<T>;
  const U mask = bits >= 8 * sizeof(T) ? U(~U(0)) : U(((U(1) << bits) - 1) << offset);
  return T((U(base) & U(~mask)) | (U(U(insert) << offset) & mask));
}

#define MTLSIM_INT_VEC2(name)                                                           \
  template <msl_int T, int N>                                                           \
  inline vec<T, N> name(const vec<T, N>& a, const vec<T, N>& b) {                       \
    return vec_map(a, b, [](T x, T y) { return name(x, y); });                          \
  }
MTLSIM_INT_VEC2(absdiff)
MTLSIM_INT_VEC2(addsat)
MTLSIM_INT_VEC2(subsat)
MTLSIM_INT_VEC2(hadd)
MTLSIM_INT_VEC2(rhadd)
MTLSIM_INT_VEC2(mulhi)
MTLSIM_INT_VEC2(rotate)
#undef MTLSIM_INT_VEC2
template <class T, int N>
  requires is_msl_int_v<T>
inline vec<T, N> popcount(const vec<T, N>& v) { return vec_map(v, [](T e) { return popcount(e); }); }
template <class T, int N>
  requires is_msl_int_v<T>
inline vec<T, N> clz(const vec<T, N>& v) { return vec_map(v, [](T e) { return clz(e); }); }
template <class T, int N>
  requires is_msl_int_v<T>
inline vec<T, N> ctz(const vec<T, N>& v) { return vec_map(v, [](T e) { return ctz(e); }); }
template <msl_int T, int N>
inline vec<T, N> reverse_bits(const vec<T, N>& v) { return vec_map(v, [](T e) { return reverse_bits(e); }); }

// ---- <metal_pack>: unorm/snorm packing, component 0 in the low bits ----
namespace detail {
inline uint pack_unorm(float x, float scale) { return uint(__builtin_rintf(__builtin_fminf(__builtin_fmaxf(x, 0.0f), 1.0f) * scale)); }
inline uint pack_snorm(float x, float scale, uint mask) {
  return uint(int(__builtin_rintf(__builtin_fminf(__builtin_fmaxf(x, -1.0f), 1.0f) * scale))) & mask;
}
}  // namespace detail
inline uint pack_float_to_unorm4x8(float4 v) {
  uint r = 0;
  for (int i = 0; i < 4; ++i) r |= detail::pack_unorm(v[i], 255.0f) << (8 * i);
  return r;
}
inline uint pack_float_to_snorm4x8(float4 v) {
  uint r = 0;
  for (int i = 0; i < 4; ++i) r |= detail::pack_snorm(v[i], 127.0f, 0xffu) << (8 * i);
  return r;
}
inline uint pack_float_to_unorm2x16(float2 v) {
  return detail::pack_unorm(v[0], 65535.0f) | detail::pack_unorm(v[1], 65535.0f) << 16;
}
inline uint pack_float_to_snorm2x16(float2 v) {
  return detail::pack_snorm(v[0], 32767.0f, 0xffffu) | detail::pack_snorm(v[1], 32767.0f, 0xffffu) << 16;
}
inline float4 unpack_unorm4x8_to_float(uint x) {
  float4 r;
  for (int i = 0; i < 4; ++i) r[i] = float((x >> (8 * i)) & 0xffu) / 255.0f;
  return r;
}
inline float4 unpack_snorm4x8_to_float(uint x) {
  float4 r;
  for (int i = 0; i < 4; ++i) r[i] = __builtin_fmaxf(float(int8_t(x >> (8 * i))) / 127.0f, -1.0f);
  return r;
}
inline float2 unpack_unorm2x16_to_float(uint x) {
  return float2(float(x & 0xffffu) / 65535.0f, float(x >> 16) / 65535.0f);
}
inline float2 unpack_snorm2x16_to_float(uint x) {
  return float2(__builtin_fmaxf(float(int16_t(x)) / 32767.0f, -1.0f), __builtin_fmaxf(float(int16_t(x >> 16)) / 32767.0f, -1.0f));
}

}  // namespace metal
