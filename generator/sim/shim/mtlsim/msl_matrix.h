// MSL matrices (<metal_matrix>): matrix<T, Cols, Rows> of float or half, column-major: m[i] is
// column i, a vec<T, Rows> (so float3x3 is 48 bytes, as in Metal). Construction from one scalar
// (a diagonal matrix), from Cols columns or from Cols * Rows scalars in column order; + - between
// matrices, * with scalars, vectors and matrices as linear algebra has it, transpose, determinant.
#pragma once
#pragma GCC system_header

#include "mtlsim/msl_vec.h"

namespace metal {

template <class T, int Cols, int Rows = Cols>
struct matrix {
  static_assert(Cols >= 2 && Cols <= 4 && Rows >= 2 && Rows <= 4, "MSL matrices have 2 to 4 columns and rows");
  using column_type = vec<T, Rows>;
  column_type columns_[Cols];

  matrix() = default;
  // T(d) on the diagonal, zeros elsewhere.
  template <msl_scalar S>
  explicit matrix(S d) {
    for (int c = 0; c < Cols; ++c)
      for (int r = 0; r < Rows; ++r) columns_[c][r] = c == r ? T(d) : T(0);
  }
  // float2x2(col0, col1)
  template <class... V>
    requires(sizeof...(V) == Cols && (std::is_convertible_v<V, column_type> && ...))
  matrix(const V&... cols) : columns_{column_type(cols)...} {}
  // float2x2(a, b, c, d): column-major scalars.
  template <msl_scalar... S>
    requires(sizeof...(S) == Cols * Rows && Cols * Rows > 1)
  matrix(S... s) {
    const T v[] = {T(s)...};
    for (int i = 0; i < Cols * Rows; ++i) columns_[i / Rows][i % Rows] = v[i];
  }
  template <class U>
    requires(!std::is_same_v<U, T>)
  explicit matrix(const matrix<U, Cols, Rows>& o) {
    for (int c = 0; c < Cols; ++c) columns_[c] = column_type(o[c]);
  }

  column_type& operator[](int c) { return columns_[c]; }
  const column_type& operator[](int c) const { return columns_[c]; }

  matrix& operator+=(const matrix& o) { return *this = *this + o; }
  matrix& operator-=(const matrix& o) { return *this = *this - o; }
  template <msl_scalar S>
  matrix& operator*=(S s) { return *this = *this * s; }
  matrix& operator*=(const matrix<T, Cols, Cols>& o) { return *this = *this * o; }
};

#define MTLSIM_MATRIX_ELEMENTWISE(op)                                                      \
  template <class T, int C, int R>                                                         \
  inline matrix<T, C, R> operator op(const matrix<T, C, R>& a, const matrix<T, C, R>& b) { \
    matrix<T, C, R> m;                                                                     \
    for (int c = 0; c < C; ++c) m[c] = a[c] op b[c];                                       \
    return m;                                                                              \
  }
MTLSIM_MATRIX_ELEMENTWISE(+)
MTLSIM_MATRIX_ELEMENTWISE(-)
#undef MTLSIM_MATRIX_ELEMENTWISE

template <class T, int C, int R>
inline matrix<T, C, R> operator-(const matrix<T, C, R>& a) {
  matrix<T, C, R> m;
  for (int c = 0; c < C; ++c) m[c] = -a[c];
  return m;
}
template <class T, int C, int R, msl_scalar S>
inline matrix<T, C, R> operator*(const matrix<T, C, R>& a, S s) {
  matrix<T, C, R> m;
  for (int c = 0; c < C; ++c) m[c] = a[c] * T(s);
  return m;
}
template <class T, int C, int R, msl_scalar S>
inline matrix<T, C, R> operator*(S s, const matrix<T, C, R>& a) {
  return a * s;
}

// m * v: the combination of m's columns weighted by v (a column vector).
template <class T, int C, int R>
inline vec<T, R> operator*(const matrix<T, C, R>& m, const vec<T, C>& v) {
  vec<T, R> r(T(0));
  for (int c = 0; c < C; ++c) r += m[c] * v[c];
  return r;
}
// v * m: v as a row vector; component c is dot(v, column c).
template <class T, int C, int R>
inline vec<T, C> operator*(const vec<T, R>& v, const matrix<T, C, R>& m) {
  vec<T, C> r;
  for (int c = 0; c < C; ++c) {
    T s = T(0);
    for (int k = 0; k < R; ++k) s += v[k] * m[c][k];
    r[c] = s;
  }
  return r;
}
// (K x R) * (C x K): column c of the product is a * (column c of b).
template <class T, int K, int R, int C>
inline matrix<T, C, R> operator*(const matrix<T, K, R>& a, const matrix<T, C, K>& b) {
  matrix<T, C, R> m;
  for (int c = 0; c < C; ++c) m[c] = a * b[c];
  return m;
}

template <class T, int C, int R>
inline matrix<T, R, C> transpose(const matrix<T, C, R>& m) {
  matrix<T, R, C> t;
  for (int c = 0; c < C; ++c)
    for (int r = 0; r < R; ++r) t[r][c] = m[c][r];
  return t;
}

template <class T>
inline T determinant(const matrix<T, 2, 2>& m) {
  return m[0][0] * m[1][1] - m[1][0] * m[0][1];
}
template <class T>
inline T determinant(const matrix<T, 3, 3>& m) {
  return m[0][0] * (m[1][1] * m[2][2] - m[2][1] * m[1][2]) - m[1][0] * (m[0][1] * m[2][2] - m[2][1] * m[0][2]) +
         m[2][0] * (m[0][1] * m[1][2] - m[1][1] * m[0][2]);
}
// Laplace expansion along column 0.
template <class T>
inline T determinant(const matrix<T, 4, 4>& m) {
  T d = T(0);
  for (int r = 0; r < 4; ++r) {
    matrix<T, 3, 3> minor;
    for (int c = 1; c < 4; ++c)
      for (int k = 0, rr = 0; k < 4; ++k)
        if (k != r) minor[c - 1][rr++] = m[c][k];
    const T term = m[0][r] * determinant(minor);
    d = r % 2 == 0 ? T(d + term) : T(d - term);
  }
  return d;
}

}  // namespace metal

#define MTLSIM_MATRIX_ALIASES(T, name)                                                                        \
  typedef metal::matrix<T, 2, 2> name##2x2;                                                                   \
  typedef metal::matrix<T, 2, 3> name##2x3;                                                                   \
  typedef metal::matrix<T, 2, 4> name##2x4;                                                                   \
  typedef metal::matrix<T, 3, 2> name##3x2;                                                                   \
  typedef metal::matrix<T, 3, 3> name##3x3;                                                                   \
  typedef metal::matrix<T, 3, 4> name##3x4;                                                                   \
  typedef metal::matrix<T, 4, 2> name##4x2;                                                                   \
  typedef metal::matrix<T, 4, 3> name##4x3;                                                                   \
  typedef metal::matrix<T, 4, 4> name##4x4;                                                                   \
  namespace metal {                                                                                           \
  using ::name##2x2; using ::name##2x3; using ::name##2x4; using ::name##3x2; using ::name##3x3;              \
  using ::name##3x4; using ::name##4x2; using ::name##4x3; using ::name##4x4;                                 \
  }
MTLSIM_MATRIX_ALIASES(float, float)
MTLSIM_MATRIX_ALIASES(_Float16, half)
#undef MTLSIM_MATRIX_ALIASES
