// MSL vector types: metal::vec<T, N> (N = 2, 3, 4) with .x/.y/.z/.w (and .r/.g/.b/.a),
// operator[], element-wise arithmetic/bitwise/comparison operators, scalar broadcast, and
// construction from scalars and smaller vectors. Size and alignment follow Metal (a 3-vector
// occupies 4 elements) so device buffers of float3/half4 have Metal's layout.
// Not supported: multi-component swizzles (v.xy), which are rare in real kernels.
#pragma once
#pragma GCC system_header  // anonymous structs in unions are a GNU extension

#include "mtlsim/msl_scalar.h"

namespace metal {

template <class T, int N>
struct vec;

namespace detail {
template <class T, int N>
struct vec_storage;
template <class T>
struct vec_storage<T, 2> {
  union {
    T elems_[2];
    struct { T x, y; };
    struct { T r, g; };
  };
};
template <class T>
struct vec_storage<T, 3> {
  union {
    T elems_[4];
    struct { T x, y, z; };
    struct { T r, g, b; };
  };
};
template <class T>
struct vec_storage<T, 4> {
  union {
    T elems_[4];
    struct { T x, y, z, w; };
    struct { T r, g, b, a; };
  };
};

template <class A>
struct components : std::integral_constant<int, 1> {};
template <class T, int N>
struct components<vec<T, N>> : std::integral_constant<int, N> {};

constexpr size_t vec_align(size_t elem, int n) { return elem * (n == 3 ? 4 : size_t(n)); }
}  // namespace detail

template <class V>
inline constexpr bool is_vec_v = false;
template <class T, int N>
inline constexpr bool is_vec_v<vec<T, N>> = true;

template <class T, int N>
struct alignas(detail::vec_align(sizeof(T), N)) vec : detail::vec_storage<T, N> {
  static_assert(N >= 2 && N <= 4, "MSL vectors have 2, 3 or 4 components");
  using value_type = T;

  vec() = default;
  // Scalar broadcast; implicit like MSL's `float4 v = 0.0f;`.
  template <msl_scalar S>
  vec(S s) {
    for (int i = 0; i < N; ++i) this->elems_[i] = T(s);
  }
  // float4(a, b, c, d), float4(v2, z, w), float4(v3, w), float4(v2, v2), ...
  template <class... A>
    requires(sizeof...(A) >= 2 && (detail::components<A>::value + ...) == N)
  vec(const A&... parts) {
    int i = 0;
    (append(i, parts), ...);
  }
  // Conversions between element types are explicit, as in MSL: float4(h4).
  template <class U>
    requires(!std::is_same_v<U, T>)
  explicit vec(const vec<U, N>& o) {
    for (int i = 0; i < N; ++i) this->elems_[i] = T(o[i]);
  }

  T& operator[](int i) { return this->elems_[i]; }
  const T& operator[](int i) const { return this->elems_[i]; }

#define MTLSIM_VEC_COMPOUND(op)                                          \
  vec& operator op##=(const vec & o) {                                   \
    for (int i = 0; i < N; ++i) this->elems_[i] = T(this->elems_[i] op o[i]); \
    return *this;                                                        \
  }                                                                      \
  template <msl_scalar S>                                                \
  vec& operator op##=(S s) {                                             \
    for (int i = 0; i < N; ++i) this->elems_[i] = T(this->elems_[i] op T(s)); \
    return *this;                                                        \
  }
  MTLSIM_VEC_COMPOUND(+)
  MTLSIM_VEC_COMPOUND(-)
  MTLSIM_VEC_COMPOUND(*)
  MTLSIM_VEC_COMPOUND(/)
  MTLSIM_VEC_COMPOUND(%)
  MTLSIM_VEC_COMPOUND(&)
  MTLSIM_VEC_COMPOUND(|)
  MTLSIM_VEC_COMPOUND(^)
  MTLSIM_VEC_COMPOUND(<<)
  MTLSIM_VEC_COMPOUND(>>)
#undef MTLSIM_VEC_COMPOUND

 private:
  template <class A>
  void append(int& i, const A& part) {
    if constexpr (is_vec_v<A>) {
      for (int k = 0; k < detail::components<A>::value; ++k) this->elems_[i++] = T(part[k]);
    } else {
      this->elems_[i++] = T(part);
    }
  }
};

// Apply f element-wise; the result element type is whatever f returns.
template <class T, int N, class F>
inline auto vec_map(const vec<T, N>& a, F f) {
  vec<decltype(f(a[0])), N> r;
  for (int i = 0; i < N; ++i) r[i] = f(a[i]);
  return r;
}
template <class T, int N, class F>
inline auto vec_map(const vec<T, N>& a, const vec<T, N>& b, F f) {
  vec<decltype(f(a[0], b[0])), N> r;
  for (int i = 0; i < N; ++i) r[i] = f(a[i], b[i]);
  return r;
}

#define MTLSIM_VEC_BINOP(op)                                                          \
  template <class T, int N>                                                           \
  inline vec<T, N> operator op(const vec<T, N>& a, const vec<T, N>& b) {              \
    return vec_map(a, b, [](T x, T y) { return T(x op y); });                         \
  }                                                                                   \
  template <class T, int N, msl_scalar S>                                             \
  inline vec<T, N> operator op(const vec<T, N>& a, S s) {                             \
    return vec_map(a, [s](T x) { return T(x op T(s)); });                             \
  }                                                                                   \
  template <class T, int N, msl_scalar S>                                             \
  inline vec<T, N> operator op(S s, const vec<T, N>& b) {                             \
    return vec_map(b, [s](T y) { return T(T(s) op y); });                             \
  }
MTLSIM_VEC_BINOP(+)
MTLSIM_VEC_BINOP(-)
MTLSIM_VEC_BINOP(*)
MTLSIM_VEC_BINOP(/)
MTLSIM_VEC_BINOP(%)
MTLSIM_VEC_BINOP(&)
MTLSIM_VEC_BINOP(|)
MTLSIM_VEC_BINOP(^)
MTLSIM_VEC_BINOP(<<)
MTLSIM_VEC_BINOP(>>)
#undef MTLSIM_VEC_BINOP

#define MTLSIM_VEC_CMP(op)                                                            \
  template <class T, int N>                                                           \
  inline vec<bool, N> operator op(const vec<T, N>& a, const vec<T, N>& b) {           \
    return vec_map(a, b, [](T x, T y) { return bool(x op y); });                      \
  }                                                                                   \
  template <class T, int N, msl_scalar S>                                             \
  inline vec<bool, N> operator op(const vec<T, N>& a, S s) {                          \
    return vec_map(a, [s](T x) { return bool(x op T(s)); });                          \
  }                                                                                   \
  template <class T, int N, msl_scalar S>                                             \
  inline vec<bool, N> operator op(S s, const vec<T, N>& b) {                          \
    return vec_map(b, [s](T y) { return bool(T(s) op y); });                          \
  }
MTLSIM_VEC_CMP(==)
MTLSIM_VEC_CMP(!=)
MTLSIM_VEC_CMP(<)
MTLSIM_VEC_CMP(<=)
MTLSIM_VEC_CMP(>)
MTLSIM_VEC_CMP(>=)
MTLSIM_VEC_CMP(&&)
MTLSIM_VEC_CMP(||)
#undef MTLSIM_VEC_CMP

template <class T, int N>
inline vec<T, N> operator-(const vec<T, N>& a) {
  return vec_map(a, [](T x) { return T(-x); });
}
template <class T, int N>
inline vec<T, N> operator+(const vec<T, N>& a) {
  return a;
}
template <class T, int N>
inline vec<T, N> operator~(const vec<T, N>& a) {
  return vec_map(a, [](T x) { return T(~x); });
}
template <class T, int N>
inline vec<bool, N> operator!(const vec<T, N>& a) {
  return vec_map(a, [](T x) { return !x; });
}

template <int N>
inline bool all(const vec<bool, N>& v) {
  for (int i = 0; i < N; ++i)
    if (!v[i]) return false;
  return true;
}
template <int N>
inline bool any(const vec<bool, N>& v) {
  for (int i = 0; i < N; ++i)
    if (v[i]) return true;
  return false;
}
inline bool all(bool b) { return b; }
inline bool any(bool b) { return b; }

}  // namespace metal

#define MTLSIM_VEC_ALIASES(T, name)  \
  typedef metal::vec<T, 2> name##2;  \
  typedef metal::vec<T, 3> name##3;  \
  typedef metal::vec<T, 4> name##4;  \
  typedef metal::vec<T, 2> packed_##name##2; \
  typedef metal::vec<T, 3> packed_##name##3; \
  typedef metal::vec<T, 4> packed_##name##4; \
  namespace metal {                  \
  using ::name##2;                   \
  using ::name##3;                   \
  using ::name##4;                   \
  }
MTLSIM_VEC_ALIASES(float, float)
MTLSIM_VEC_ALIASES(_Float16, half)
MTLSIM_VEC_ALIASES(metal::bfloat, bfloat)
MTLSIM_VEC_ALIASES(int, int)
MTLSIM_VEC_ALIASES(unsigned int, uint)
MTLSIM_VEC_ALIASES(short, short)
MTLSIM_VEC_ALIASES(unsigned short, ushort)
MTLSIM_VEC_ALIASES(signed char, char)
MTLSIM_VEC_ALIASES(unsigned char, uchar)
MTLSIM_VEC_ALIASES(long, long)
MTLSIM_VEC_ALIASES(unsigned long, ulong)
MTLSIM_VEC_ALIASES(bool, bool)
#undef MTLSIM_VEC_ALIASES
