// SIMD-group matrices (<metal_simdgroup_matrix>, MSL 2.3): simdgroup_matrix<T, Cols, Rows> is ONE
// 8x8 matrix held jointly by the 32 lanes of a simdgroup. As on Apple GPUs, each lane keeps two
// elements of it (thread_elements()), at the row and columns lane_coord() gives, so kernels that
// write thread_elements() directly (MLX's steel) see Apple's layout.
// simdgroup_load, simdgroup_store, simdgroup_multiply(_accumulate) are collectives: every active
// lane must reach the same call, else simd divergence is reported as for simd_sum. Loads and
// stores move each lane's own two elements; the multiplies gather all lanes' elements in the
// rendezvous (elements of lanes that have returned read as NaN, so a product that needs them shows
// it). Only 8x8 matrices exist (as on the hardware).
#pragma once
#pragma GCC system_header

#include <cstdio>
#include <cstdlib>

#include "mtlsim/msl_simd.h"

namespace mtlsim::detail {

// Apple's lane layout of an 8x8 simdgroup matrix (the one MLX's steel/gemm/mma.h computes): with
// q = lane / 4, lane l holds row (q & 4) + (l / 2) % 4, columns col and col + 1 where
// col = (q & 2) * 2 + (l % 2) * 2.
struct MatrixCoord {
  int row, col;
};
constexpr MatrixCoord lane_coord(uint32_t lane) {
  const int l = int(lane), q = l / 4;
  return {(q & 4) + (l / 2) % 4, (q & 2) * 2 + (l % 2) * 2};
}

// One lane's inputs to a multiply: its two elements of a, b and c, in that order.
template <class E>
struct MmaIn {
  E v[6];
};
template <class E>
struct MmaOut {
  E v[2];
};
template <class E>
struct elem_of<MmaIn<E>> { using type = E; };
template <class E>
struct elem_of<MmaOut<E>> { using type = E; };

// d = a * b + c over the 8x8 matrices the arrived lanes hold; float accumulation in column order.
struct MatrixMultiply {
  template <class E>
  static void run(const MmaIn<E>* in, MmaOut<E>* out, const uint32_t*, uint32_t arrived) {
    float m[3][8][8];
    for (auto& mat : m)
      for (auto& row : mat)
        for (float& x : row) x = __builtin_nanf("");
    for (uint32_t s = arrived; s; s &= s - 1) {
      const uint32_t l = uint32_t(__builtin_ctz(s));
      const MatrixCoord p = lane_coord(l);
      for (int k = 0; k < 3; ++k)
        for (int e = 0; e < 2; ++e) m[k][p.row][p.col + e] = float(in[l].v[2 * k + e]);
    }
    for (uint32_t s = arrived; s; s &= s - 1) {
      const uint32_t l = uint32_t(__builtin_ctz(s));
      const MatrixCoord p = lane_coord(l);
      for (int e = 0; e < 2; ++e) {
        float acc = 0.0f;
        for (int j = 0; j < 8; ++j) acc = __builtin_fmaf(m[0][p.row][j], m[1][j][p.col + e], acc);
        out[l].v[e] = E(acc + m[2][p.row][p.col + e]);
      }
    }
  }
};

// The loop form (msl_loop_rewrite.cpp) runs a region for every lane before the next and does not
// know the simdgroup matrix functions as simd functions: a lane whose collective is still pending
// on return ran there, and its result would be wrong. Stop with the reason instead.
inline void require_completed(const Lane& me, Op op, int line) {
  if (!(me.simd->arrived & me.bit)) return;
  std::fprintf(stderr,
               "mtlsim: %s at line %d ran in the loop form of its kernel, which does not treat it as a "
               "simd function; run this kernel with --exec fibers\n",
               op_name(op), line);
  std::abort();
}

// A rendezvous that moves no data: loads and stores move each lane's own elements.
inline void matrix_sync(Op op, int line) {
  simd_collective<bool, bool, NoData>(op, false, 0, line);
  require_completed(current_lane(op, line), op, line);
}

// Offset of element (row, col) of a matrix stored from `origin` (x: column, y: row) with
// `elements_per_row`, read transposed when asked.
inline size_t matrix_offset(int row, int col, uint64_t elements_per_row, metal::vec<unsigned long, 2> origin,
                            bool transpose) {
  const uint64_t r = transpose ? uint64_t(col) : uint64_t(row), c = transpose ? uint64_t(row) : uint64_t(col);
  return size_t((origin.y + r) * elements_per_row + origin.x + c);
}

}  // namespace mtlsim::detail

namespace metal {

template <class T, int Cols, int Rows = Cols>
struct simdgroup_matrix {
  static_assert(Cols == 8 && Rows == 8, "the simulator has 8x8 simdgroup matrices only, as Apple GPUs");
  vec<T, 2> elements_;

  simdgroup_matrix() = default;
  // A matrix with `diagonal` on its diagonal and zeros elsewhere.
  explicit simdgroup_matrix(T diagonal) {
    const auto p = mtlsim::detail::lane_coord(mtlsim::detail::current_lane(mtlsim::detail::Op::none, 0).lane);
    for (int e = 0; e < 2; ++e) elements_[e] = p.row == p.col + e ? diagonal : T(0);
  }
  // This lane's two elements (row lane_coord().row, columns col and col + 1).
  vec<T, 2>& thread_elements() { return elements_; }
  const vec<T, 2>& thread_elements() const { return elements_; }
};

typedef simdgroup_matrix<float, 8, 8> simdgroup_float8x8;
typedef simdgroup_matrix<_Float16, 8, 8> simdgroup_half8x8;
typedef simdgroup_matrix<bfloat, 8, 8> simdgroup_bfloat8x8;

template <class T, int Cols, int Rows = Cols>
inline simdgroup_matrix<T, Cols, Rows> make_filled_simdgroup_matrix(T value) {
  simdgroup_matrix<T, Cols, Rows> m;
  m.elements_ = vec<T, 2>(value);
  return m;
}

template <class T, int C, int R, class U>
inline void simdgroup_load(simdgroup_matrix<T, C, R>& d, const U* src, ulong elements_per_row = C,
                           vec<unsigned long, 2> matrix_origin = 0, bool transpose_matrix = false,
                           int line = __builtin_LINE()) {
  using namespace mtlsim::detail;
  const MatrixCoord p = lane_coord(current_lane(Op::simdgroup_load, line).lane);
  for (int e = 0; e < 2; ++e)
    d.elements_[e] = T(src[matrix_offset(p.row, p.col + e, elements_per_row, matrix_origin, transpose_matrix)]);
  matrix_sync(Op::simdgroup_load, line);
}

template <class T, int C, int R, class U>
inline void simdgroup_store(const simdgroup_matrix<T, C, R>& a, U* dst, ulong elements_per_row = C,
                            vec<unsigned long, 2> matrix_origin = 0, bool transpose_matrix = false,
                            int line = __builtin_LINE()) {
  using namespace mtlsim::detail;
  const MatrixCoord p = lane_coord(current_lane(Op::simdgroup_store, line).lane);
  for (int e = 0; e < 2; ++e)
    dst[matrix_offset(p.row, p.col + e, elements_per_row, matrix_origin, transpose_matrix)] = U(a.elements_[e]);
  matrix_sync(Op::simdgroup_store, line);
}

namespace detail {
// d = a * b + c as one collective; inputs of one type travel as that type (so poison in them is
// traced), mixed types as float.
template <class TD, class TA, class TB, class TC>
inline void multiply_collective(mtlsim::detail::Op op, simdgroup_matrix<TD, 8, 8>& d,
                                const simdgroup_matrix<TA, 8, 8>& a, const simdgroup_matrix<TB, 8, 8>& b,
                                const simdgroup_matrix<TC, 8, 8>& c, int line) {
  using namespace mtlsim::detail;
  using E = std::conditional_t<std::is_same_v<TA, TB> && std::is_same_v<TA, TC>, TA, float>;
  const MmaIn<E> in{{E(a.elements_[0]), E(a.elements_[1]), E(b.elements_[0]), E(b.elements_[1]),
                     E(c.elements_[0]), E(c.elements_[1])}};
  const MmaOut<E> r = simd_collective<MmaIn<E>, MmaOut<E>, MatrixMultiply>(op, in, 0, line);
  require_completed(current_lane(op, line), op, line);
  d.elements_ = vec<TD, 2>(TD(r.v[0]), TD(r.v[1]));
}
}  // namespace detail

template <class TD, class TA, class TB, class TC, int N>
inline void simdgroup_multiply_accumulate(simdgroup_matrix<TD, N, N>& d, const simdgroup_matrix<TA, N, N>& a,
                                          const simdgroup_matrix<TB, N, N>& b, const simdgroup_matrix<TC, N, N>& c,
                                          int line = __builtin_LINE()) {
  detail::multiply_collective(mtlsim::detail::Op::simdgroup_multiply_accumulate, d, a, b, c, line);
}

template <class TD, class TA, class TB, int N>
inline void simdgroup_multiply(simdgroup_matrix<TD, N, N>& d, const simdgroup_matrix<TA, N, N>& a,
                               const simdgroup_matrix<TB, N, N>& b, int line = __builtin_LINE()) {
  const simdgroup_matrix<TD, N, N> zero = make_filled_simdgroup_matrix<TD, N, N>(TD(0));
  detail::multiply_collective(mtlsim::detail::Op::simdgroup_multiply, d, a, b, zero, line);
}

// a * b as an expression (MLX's conv.metal writes (G * g) * Gt): one simdgroup_multiply.
template <class T, int N>
inline simdgroup_matrix<T, N, N> operator*(const simdgroup_matrix<T, N, N>& a, const simdgroup_matrix<T, N, N>& b) {
  simdgroup_matrix<T, N, N> d;
  simdgroup_multiply(d, a, b, __builtin_LINE());
  return d;
}

}  // namespace metal
