// MSL scalar names and metal::vec<T, N> for the CUDA flavour. CUDA's own float4 & co. are
// global POD structs without operators, so the front end respells the kernel's vector type names
// (`float4` -> `mtl_float4`), which name these.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

using uint = unsigned int;
using ushort = unsigned short;
using uchar = unsigned char;
using half = __half;
using bfloat = __nv_bfloat16;

namespace mtlcu {

// Rounds to nearest, ties to even (v >= 0, as a literal is).
__host__ __device__ constexpr unsigned round_even(double v) {
  unsigned i = static_cast<unsigned>(v);
  double rest = v - i;
  return rest > 0.5 || (rest == 0.5 && (i & 1u)) ? i + 1 : i;
}

// The binary16 bits nearest a non-negative double, in a constant expression (CUDA's own float ->
// __half conversions are not constexpr). A mantissa that rounds up to 1024 carries into the
// exponent, as the encoding allows; 65520 and beyond round to infinity.
__host__ __device__ constexpr unsigned short half_bits(double v) {
  if (v >= 65520.0) return 0x7C00;
  if (v < 0x1p-14) return static_cast<unsigned short>(round_even(v * 0x1p24));  // subnormal
  int exponent = 0;
  for (; v >= 2.0; v /= 2.0) ++exponent;
  for (; v < 1.0; v *= 2.0) --exponent;
  return static_cast<unsigned short>(((exponent + 15) << 10) + round_even((v - 1.0) * 1024.0));
}

// An MSL half literal (`0.5h`): the front end rewrites it to half_literal(0.5). The decimal is
// rounded to double first, then to half: a double rounding that matters only for decimals within
// 2^-42 of a tie between two halves, which no kernel writes.
__host__ __device__ constexpr half half_literal(double v) { return half(__half_raw{half_bits(v)}); }

}  // namespace mtlcu

namespace metal {

template <class T, int N>
struct vec_storage;
template <class T>
struct alignas(2 * sizeof(T)) vec_storage<T, 2> {
  T x, y;
};
template <class T>
struct alignas(4 * sizeof(T)) vec_storage<T, 3> {
  T x, y, z;
};
template <class T>
struct alignas(4 * sizeof(T)) vec_storage<T, 4> {
  T x, y, z, w;
};

template <class T, int N>
struct vec : vec_storage<T, N> {
  using value_type = T;
  static constexpr int size = N;

  __host__ __device__ vec() = default;
  // A scalar fills every component, as in MSL.
  __host__ __device__ vec(T s) {
    for (int i = 0; i < N; ++i) (*this)[i] = s;
  }
  // Components, and vectors whose components follow one another: float4(a.xy, z, w).
  template <class A, class B, class... Rest>
  __host__ __device__ vec(A a, B b, Rest... rest) {
    int at = 0;
    put(at, a);
    put(at, b);
    (put(at, rest), ...);
  }
  // Element-wise conversion: float4(half4).
  template <class U>
  __host__ __device__ explicit vec(const vec<U, N>& other) {
    for (int i = 0; i < N; ++i) (*this)[i] = T(float(other[i]));
  }
  __host__ __device__ T& operator[](int i) { return (&this->x)[i]; }
  __host__ __device__ const T& operator[](int i) const { return (&this->x)[i]; }

 private:
  template <class U, int M>
  __host__ __device__ void put(int& at, const vec<U, M>& v) {
    for (int i = 0; i < M; ++i) (*this)[at++] = T(v[i]);
  }
  template <class U>
  __host__ __device__ void put(int& at, U s) {
    (*this)[at++] = T(s);
  }
};

// Element-wise operators, vector with vector and with a scalar on either side.
#define MTLCU_VEC_OP(op)                                                                   \
  template <class T, int N>                                                               \
  __host__ __device__ vec<T, N> operator op(vec<T, N> a, const vec<T, N>& b) {             \
    for (int i = 0; i < N; ++i) a[i] = a[i] op b[i];                                      \
    return a;                                                                             \
  }                                                                                       \
  template <class T, int N>                                                               \
  __host__ __device__ vec<T, N> operator op(vec<T, N> a, T s) {                            \
    for (int i = 0; i < N; ++i) a[i] = a[i] op s;                                         \
    return a;                                                                             \
  }                                                                                       \
  template <class T, int N>                                                               \
  __host__ __device__ vec<T, N> operator op(T s, vec<T, N> a) {                            \
    for (int i = 0; i < N; ++i) a[i] = s op a[i];                                         \
    return a;                                                                             \
  }                                                                                       \
  template <class T, int N, class U>                                                      \
  __host__ __device__ vec<T, N>& operator op##=(vec<T, N>& a, const U& b) {                 \
    a = a op b;                                                                           \
    return a;                                                                             \
  }
MTLCU_VEC_OP(+)
MTLCU_VEC_OP(-)
MTLCU_VEC_OP(*)
MTLCU_VEC_OP(/)
#undef MTLCU_VEC_OP

template <class T, int N>
__host__ __device__ vec<T, N> operator-(vec<T, N> a) {
  for (int i = 0; i < N; ++i) a[i] = -a[i];
  return a;
}

template <class T, int N>
__host__ __device__ T dot(const vec<T, N>& a, const vec<T, N>& b) {
  T s = a[0] * b[0];
  for (int i = 1; i < N; ++i) s = s + a[i] * b[i];
  return s;
}

template <class T>
struct is_vec {
  static constexpr bool value = false;
};
template <class T, int N>
struct is_vec<vec<T, N>> {
  static constexpr bool value = true;
};

}  // namespace metal

#define MTLCU_VEC_NAMES(T)          \
  using mtl_##T##2 = metal::vec<T, 2>; \
  using mtl_##T##3 = metal::vec<T, 3>; \
  using mtl_##T##4 = metal::vec<T, 4>;
MTLCU_VEC_NAMES(float)
MTLCU_VEC_NAMES(half)
MTLCU_VEC_NAMES(bfloat)
MTLCU_VEC_NAMES(int)
MTLCU_VEC_NAMES(uint)
MTLCU_VEC_NAMES(short)
MTLCU_VEC_NAMES(ushort)
MTLCU_VEC_NAMES(char)
MTLCU_VEC_NAMES(uchar)
MTLCU_VEC_NAMES(bool)
MTLCU_VEC_NAMES(long)
#undef MTLCU_VEC_NAMES
using mtl_ulong2 = metal::vec<unsigned long, 2>;
using mtl_ulong3 = metal::vec<unsigned long, 3>;
using mtl_ulong4 = metal::vec<unsigned long, 4>;
