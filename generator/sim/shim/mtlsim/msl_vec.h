// MSL vector types: metal::vec<T, N> (N = 2, 3, 4) with .x/.y/.z/.w (and .r/.g/.b/.a),
// operator[], element-wise arithmetic/bitwise/comparison operators, scalar broadcast, and
// construction from scalars and smaller vectors. Size and alignment follow Metal (a 3-vector
// occupies 4 elements) so device buffers of float3/half4 have Metal's layout.
// Two- and three-component swizzles (v.xy, v.zyx, c.rgb) read as vectors and can be assigned from
// vectors; see vec_swizzle for the one case that is wrong.
#pragma once
#pragma GCC system_header  // anonymous structs in unions are a GNU extension

#include "mtlsim/msl_scalar.h"

namespace metal {

template <class T, int N>
struct vec;

namespace detail {
template <int... I>
constexpr int min_index() {
  int m = 3;
  ((m = I < m ? I : m), ...);
  return m;
}
template <int... I>
constexpr int max_index() {
  int m = 0;
  ((m = I > m ? I : m), ...);
  return m;
}
}  // namespace detail

// A swizzle of two or three components (v.xy, v.zyx): a union member of the vector that overlays
// elements lo..hi of its storage (placed there by a padding member, see MTLSIM_SW2), converts to
// vec<T, sizeof...(I)> and can be assigned one when its components are distinct. It must stay
// trivially copyable (vectors are), so `a.xz = b.xz` with the same swizzle on both sides copies
// elements lo..hi whole: right when the components form a contiguous range (xy, yzw, zyx, rgb),
// but it also copies the components in between otherwise (y for xz): write a.xz = float2(b.xz).
template <class T, int... I>
struct vec_swizzle {
  static constexpr int lo = detail::min_index<I...>(), hi = detail::max_index<I...>(), size = int(sizeof...(I));
  using vec_type = vec<T, size>;
  T e_[hi - lo + 1];

  vec_type get() const { return vec_type(e_[I - lo]...); }
  operator vec_type() const { return get(); }
  T operator[](int k) const { return get()[k]; }
  vec_type operator-() const { return -get(); }
  vec_swizzle& operator=(const vec_type& v) {
    static_assert(distinct(), "a swizzle that repeats a component cannot be assigned");
    int k = 0;
    ((e_[I - lo] = v[k++]), ...);
    return *this;
  }
  template <class B>
  vec_swizzle& operator+=(const B& b) { return *this = get() + b; }
  template <class B>
  vec_swizzle& operator-=(const B& b) { return *this = get() - b; }
  template <class B>
  vec_swizzle& operator*=(const B& b) { return *this = get() * b; }
  template <class B>
  vec_swizzle& operator/=(const B& b) { return *this = get() / b; }

 private:
  static constexpr bool distinct() {
    const int idx[] = {I...};
    for (int a = 0; a < size; ++a)
      for (int b = a + 1; b < size; ++b)
        if (idx[a] == idx[b]) return false;
    return true;
  }
};

template <class A>
inline constexpr bool is_swizzle_v = false;
template <class T, int... I>
inline constexpr bool is_swizzle_v<vec_swizzle<T, I...>> = true;

namespace detail {
constexpr int swizzle_index(const char* c) {
  return c[0] == 'x' || c[0] == 'r' ? 0 : c[0] == 'y' || c[0] == 'g' ? 1 : c[0] == 'z' || c[0] == 'b' ? 2 : 3;
}
// Lowest component of a swizzle spelled "xz": the elements in front of it are padding.
constexpr int swizzle_lo(const char* s) {
  int lo = 3;
  for (; *s; ++s) lo = swizzle_index(s) < lo ? swizzle_index(s) : lo;
  return lo;
}
template <class T, int Lo>
struct swizzle_pad {
  T pad_[Lo];
};
template <class T>
struct swizzle_pad<T, 0> {};

// One swizzle member `ab` (resp. `abc`) and its padding, in an anonymous struct.
#define MTLSIM_SW2(a, b)                                                                          \
  struct {                                                                                         \
    [[no_unique_address]] detail::swizzle_pad<T, detail::swizzle_lo(#a #b)> a##b##_pad_;           \
    vec_swizzle<T, detail::swizzle_index(#a), detail::swizzle_index(#b)> a##b;                     \
  };
#define MTLSIM_SW3(a, b, c)                                                                       \
  struct {                                                                                         \
    [[no_unique_address]] detail::swizzle_pad<T, detail::swizzle_lo(#a #b #c)> a##b##c##_pad_;     \
    vec_swizzle<T, detail::swizzle_index(#a), detail::swizzle_index(#b), detail::swizzle_index(#c)> a##b##c; \
  };
// Every swizzle of 2 and 3 components over a set of 2, 3 or 4 component names.
#define MTLSIM_SW2_OF2(a, p, q) MTLSIM_SW2(a, p) MTLSIM_SW2(a, q)
#define MTLSIM_SW2_OF3(a, p, q, r) MTLSIM_SW2_OF2(a, p, q) MTLSIM_SW2(a, r)
#define MTLSIM_SW2_OF4(a, p, q, r, s) MTLSIM_SW2_OF3(a, p, q, r) MTLSIM_SW2(a, s)
#define MTLSIM_SW3_OF2(a, b, p, q) MTLSIM_SW3(a, b, p) MTLSIM_SW3(a, b, q)
#define MTLSIM_SW3_OF3(a, b, p, q, r) MTLSIM_SW3_OF2(a, b, p, q) MTLSIM_SW3(a, b, r)
#define MTLSIM_SW3_OF4(a, b, p, q, r, s) MTLSIM_SW3_OF3(a, b, p, q, r) MTLSIM_SW3(a, b, s)
#define MTLSIM_SWIZZLES_2(p, q)                                       \
  MTLSIM_SW2_OF2(p, p, q) MTLSIM_SW2_OF2(q, p, q)                     \
  MTLSIM_SW3_OF2(p, p, p, q) MTLSIM_SW3_OF2(p, q, p, q)               \
  MTLSIM_SW3_OF2(q, p, p, q) MTLSIM_SW3_OF2(q, q, p, q)
#define MTLSIM_SW3_ROW3(a, p, q, r) MTLSIM_SW3_OF3(a, p, p, q, r) MTLSIM_SW3_OF3(a, q, p, q, r) MTLSIM_SW3_OF3(a, r, p, q, r)
#define MTLSIM_SWIZZLES_3(p, q, r)                                                      \
  MTLSIM_SW2_OF3(p, p, q, r) MTLSIM_SW2_OF3(q, p, q, r) MTLSIM_SW2_OF3(r, p, q, r)      \
  MTLSIM_SW3_ROW3(p, p, q, r) MTLSIM_SW3_ROW3(q, p, q, r) MTLSIM_SW3_ROW3(r, p, q, r)
#define MTLSIM_SW3_ROW4(a, p, q, r, s)                                                   \
  MTLSIM_SW3_OF4(a, p, p, q, r, s) MTLSIM_SW3_OF4(a, q, p, q, r, s)                      \
  MTLSIM_SW3_OF4(a, r, p, q, r, s) MTLSIM_SW3_OF4(a, s, p, q, r, s)
#define MTLSIM_SWIZZLES_4(p, q, r, s)                                                                  \
  MTLSIM_SW2_OF4(p, p, q, r, s) MTLSIM_SW2_OF4(q, p, q, r, s)                                          \
  MTLSIM_SW2_OF4(r, p, q, r, s) MTLSIM_SW2_OF4(s, p, q, r, s)                                          \
  MTLSIM_SW3_ROW4(p, p, q, r, s) MTLSIM_SW3_ROW4(q, p, q, r, s)                                        \
  MTLSIM_SW3_ROW4(r, p, q, r, s) MTLSIM_SW3_ROW4(s, p, q, r, s)

template <class T, int N>
struct vec_storage;
template <class T>
struct vec_storage<T, 2> {
  union {
    T elems_[2];
    struct { T x, y; };
    struct { T r, g; };
    MTLSIM_SWIZZLES_2(x, y)
    MTLSIM_SWIZZLES_2(r, g)
  };
};
template <class T>
struct vec_storage<T, 3> {
  union {
    T elems_[4];
    struct { T x, y, z; };
    struct { T r, g, b; };
    MTLSIM_SWIZZLES_3(x, y, z)
    MTLSIM_SWIZZLES_3(r, g, b)
  };
};
template <class T>
struct vec_storage<T, 4> {
  union {
    T elems_[4];
    struct { T x, y, z, w; };
    struct { T r, g, b, a; };
    MTLSIM_SWIZZLES_4(x, y, z, w)
    MTLSIM_SWIZZLES_4(r, g, b, a)
  };
};

template <class A>
struct components : std::integral_constant<int, 1> {};
template <class T, int N>
struct components<vec<T, N>> : std::integral_constant<int, N> {};
template <class T, int... I>
struct components<vec_swizzle<T, I...>> : std::integral_constant<int, int(sizeof...(I))> {};

// A swizzle operand as the vector it reads; anything else as is.
template <class A>
inline decltype(auto) as_vec(const A& a) {
  if constexpr (is_swizzle_v<A>) return a.get();
  else return (a);
}

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
  // float4(a, b, c, d), float4(v2, z, w), float4(v3, w), float4(v2, v2), ...; and a braced list of
  // fewer scalars, `uint4 k = {a, b, c}`, whose missing components are zero (as in Metal; the
  // function-style float4(a, b, c) that Metal refuses is accepted too).
  template <class... A>
    requires(sizeof...(A) >= 2 && ((detail::components<A>::value + ...) == N ||
                                   ((msl_scalar<A> && ...) && int(sizeof...(A)) < N)))
  vec(const A&... parts) {
    int i = 0;
    (append(i, parts), ...);
    for (; i < N; ++i) this->elems_[i] = T(0);
  }
  // Conversions between element types are explicit, as in MSL: float4(h4).
  template <class U>
    requires(!std::is_same_v<U, T>)
  explicit vec(const vec<U, N>& o) {
    for (int i = 0; i < N; ++i) this->elems_[i] = T(o[i]);
  }
  // float2(v.xy), float2(h.xy)
  template <class S>
    requires(is_swizzle_v<S> && S::size == N)
  explicit vec(const S& s) : vec(s.get()) {}

  // Not bounds-checked (-fsanitize=bounds, poison_hooks.h): a report would name this line, not the kernel's.
  __attribute__((no_sanitize("bounds"))) T& operator[](int i) { return this->elems_[i]; }
  __attribute__((no_sanitize("bounds"))) const T& operator[](int i) const { return this->elems_[i]; }

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
    if constexpr (is_swizzle_v<A>) {
      append(i, part.get());
    } else if constexpr (is_vec_v<A>) {
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

// Operators with a swizzle operand work on the vector it reads.
#define MTLSIM_SWIZZLE_BINOP(op)                                          \
  template <class A, class B>                                             \
    requires(is_swizzle_v<A> || is_swizzle_v<B>)                          \
  inline auto operator op(const A& a, const B& b) {                       \
    return detail::as_vec(a) op detail::as_vec(b);                        \
  }
MTLSIM_SWIZZLE_BINOP(+)
MTLSIM_SWIZZLE_BINOP(-)
MTLSIM_SWIZZLE_BINOP(*)
MTLSIM_SWIZZLE_BINOP(/)
MTLSIM_SWIZZLE_BINOP(%)
MTLSIM_SWIZZLE_BINOP(&)
MTLSIM_SWIZZLE_BINOP(|)
MTLSIM_SWIZZLE_BINOP(^)
MTLSIM_SWIZZLE_BINOP(<<)
MTLSIM_SWIZZLE_BINOP(>>)
MTLSIM_SWIZZLE_BINOP(==)
MTLSIM_SWIZZLE_BINOP(!=)
MTLSIM_SWIZZLE_BINOP(<)
MTLSIM_SWIZZLE_BINOP(<=)
MTLSIM_SWIZZLE_BINOP(>)
MTLSIM_SWIZZLE_BINOP(>=)
#undef MTLSIM_SWIZZLE_BINOP

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
