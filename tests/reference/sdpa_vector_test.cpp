// The decode-attention references: hand-computed values for a tiny GQA case, and the 2-pass
// references (partial, then merge) composed against the 1-pass reference on realistic shapes,
// with NaN in every cache row past kv_len so that reading one would show.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "sdpa_vector/sdpa_vector_reference.h"
#include "sdpa_vector_2pass_merge/sdpa_vector_2pass_merge_reference.h"
#include "sdpa_vector_2pass_partial/sdpa_vector_2pass_partial_reference.h"
#include "support/mtlgen_testdata.h"

namespace sdpa_vector_test {  // named: unity builds (tests/CMakeLists.txt)

namespace one_pass = mtlgen::kernels::sdpa_vector;
namespace partial = mtlgen::kernels::sdpa_vector_2pass_partial;
namespace merge = mtlgen::kernels::sdpa_vector_2pass_merge;
using mtlgen::bfloat;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

struct Shape {
  uint32_t n_heads, n_kv_heads, head_dim, kv_len, capacity;
};

// Inputs in the kernels' layouts: q [n_heads, D] float, K/V [n_kv_heads, capacity, D] bf16.
struct Problem {
  Shape shape;
  std::vector<float> q;
  std::vector<bfloat> k, v;

  explicit Problem(Shape s)
      : shape(s), q(size_t(s.n_heads) * s.head_dim, 0.0f),
        k(size_t(s.n_kv_heads) * s.capacity * s.head_dim, bfloat(0.0f)), v(k) {
    poison_rows_past_kv_len();
  }
  float& q_at(uint32_t h, uint32_t d) { return q[size_t(h) * shape.head_dim + d]; }
  bfloat& k_at(uint32_t g, uint32_t j, uint32_t d) { return k[(size_t(g) * shape.capacity + j) * shape.head_dim + d]; }
  bfloat& v_at(uint32_t g, uint32_t j, uint32_t d) { return v[(size_t(g) * shape.capacity + j) * shape.head_dim + d]; }

  void poison_rows_past_kv_len() {
    for (uint32_t g = 0; g < shape.n_kv_heads; ++g)
      for (uint32_t j = shape.kv_len; j < shape.capacity; ++j)
        for (uint32_t d = 0; d < shape.head_dim; ++d) k_at(g, j, d) = v_at(g, j, d) = bfloat(kNaN);
  }
  // Standard normal q, k and v from the generator verify and the Mac harness use.
  void fill_random(uint32_t seed) {
    namespace td = mtlgen::testdata;
    const td::Fill normal;
    td::fill_elements(normal, mtlgen::DType::f32, q.data(), q.size(), td::buffer_seed(seed, "q"));
    const size_t rows = size_t(shape.n_kv_heads) * shape.kv_len * shape.head_dim;
    std::vector<float> ks(rows), vs(rows);
    td::fill_elements(normal, mtlgen::DType::f32, ks.data(), rows, td::buffer_seed(seed, "k"));
    td::fill_elements(normal, mtlgen::DType::f32, vs.data(), rows, td::buffer_seed(seed, "v"));
    size_t i = 0;
    for (uint32_t g = 0; g < shape.n_kv_heads; ++g)
      for (uint32_t j = 0; j < shape.kv_len; ++j)
        for (uint32_t d = 0; d < shape.head_dim; ++d, ++i) {
          k_at(g, j, d) = bfloat(ks[i]);
          v_at(g, j, d) = bfloat(vs[i]);
        }
  }
};

std::vector<float> run_one_pass(const Problem& p, float scale = 0.0f) {
  const Shape& s = p.shape;
  std::vector<float> out(size_t(s.n_heads) * s.head_dim);
  one_pass::reference<float, bfloat>(one_pass::Dims{s.n_heads, s.n_kv_heads, s.head_dim, s.kv_len, s.capacity},
                                     std::span<const float>(p.q), std::span<const bfloat>(p.k),
                                     std::span<const bfloat>(p.v), std::span<float>(out), one_pass::Scalars{scale});
  return out;
}

// Pass 1's three outputs.
struct Blocks {
  std::vector<float> out, max, sum;
};

Blocks run_partial(const Problem& p, uint32_t blocks, float scale = 0.0f) {
  const Shape& s = p.shape;
  Blocks b{std::vector<float>(size_t(s.n_heads) * blocks * s.head_dim), std::vector<float>(size_t(s.n_heads) * blocks),
           std::vector<float>(size_t(s.n_heads) * blocks)};
  partial::reference<float, bfloat>(
      partial::Dims{s.n_heads, s.n_kv_heads, s.head_dim, s.kv_len, s.capacity, blocks}, std::span<const float>(p.q),
      std::span<const bfloat>(p.k), std::span<const bfloat>(p.v), std::span<float>(b.out), std::span<float>(b.max),
      std::span<float>(b.sum), partial::Scalars{scale});
  return b;
}

std::vector<float> run_merge(const Blocks& b, uint32_t n_heads, uint32_t blocks, uint32_t head_dim) {
  std::vector<float> out(size_t(n_heads) * head_dim);
  merge::reference<float>(merge::Dims{n_heads, blocks, head_dim}, std::span<const float>(b.out),
                          std::span<const float>(b.max), std::span<const float>(b.sum), std::span<float>(out));
  return out;
}

std::vector<float> run_two_pass(const Problem& p, uint32_t blocks, float scale = 0.0f) {
  return run_merge(run_partial(p, blocks, scale), p.shape.n_heads, blocks, p.shape.head_dim);
}

// Four query heads on two KV heads (heads 0, 1 -> KV head 0; heads 2, 3 -> KV head 1), two keys,
// D = 32 with only elements 0 and 1 non-zero, scale 1. Row 2 of each KV head is NaN.
Problem tiny_gqa() {
  Problem p(Shape{4, 2, 32, 2, 3});
  p.k_at(0, 0, 0) = bfloat(1.0f);  // KV head 0: k0 = (1, 0), k1 = (0, 1)
  p.k_at(0, 1, 1) = bfloat(1.0f);
  p.v_at(0, 0, 0) = bfloat(1.0f);  // v0 = (1, 2), v1 = (3, 4)
  p.v_at(0, 0, 1) = bfloat(2.0f);
  p.v_at(0, 1, 0) = bfloat(3.0f);
  p.v_at(0, 1, 1) = bfloat(4.0f);
  p.k_at(1, 0, 0) = bfloat(2.0f);  // KV head 1: k0 = (2, 0), k1 = (0, 0)
  p.v_at(1, 0, 0) = bfloat(-1.0f);  // v0 = (-1, 0), v1 = (1, 1)
  p.v_at(1, 1, 0) = bfloat(1.0f);
  p.v_at(1, 1, 1) = bfloat(1.0f);
  p.q_at(0, 0) = std::log(3.0f);  // scores (ln 3, 0): weights 3/4, 1/4
  // head 1: q = 0, scores (0, 0): weights 1/2, 1/2
  p.q_at(2, 0) = std::log(2.0f) / 2;  // scores (ln 2, 0): weights 2/3, 1/3
  p.q_at(2, 1) = 5.0f;                // meets k = 0 only
  p.q_at(3, 1) = 7.0f;                // scores (0, 0)
  return p;
}

// Expected (element 0, element 1) per head of tiny_gqa(); elements 2.. are 0.
constexpr float kTinyExpected[4][2] = {{1.5f, 2.5f}, {2.0f, 3.0f}, {-1.0f / 3, 1.0f / 3}, {0.0f, 0.5f}};

void expect_tiny_outputs(const std::vector<float>& out) {
  for (int h = 0; h < 4; ++h) {
    EXPECT_NEAR(out[h * 32 + 0], kTinyExpected[h][0], 1e-6) << "head " << h;
    EXPECT_NEAR(out[h * 32 + 1], kTinyExpected[h][1], 1e-6) << "head " << h;
    for (int d = 2; d < 32; ++d) EXPECT_EQ(out[h * 32 + d], 0.0f) << "head " << h << " element " << d;
  }
}

TEST(SdpaVectorReference, TinyGqaMatchesHandComputedValues) { expect_tiny_outputs(run_one_pass(tiny_gqa(), 1.0f)); }

TEST(SdpaVectorReference, DefaultScaleIsOneOverSqrtHeadDim) {
  Problem p(Shape{2, 1, 64, 7, 9});
  p.fill_random(5);
  std::vector<float> by_default = run_one_pass(p), explicit_scale = run_one_pass(p, 0.125f);  // 1 / sqrt(64)
  for (size_t i = 0; i < by_default.size(); ++i) EXPECT_EQ(by_default[i], explicit_scale[i]) << i;
}

TEST(SdpaVectorReference, PreconditionsUseTheSpecsWording) {
  Problem p(Shape{3, 2, 32, 1, 1});
  EXPECT_THROW(run_one_pass(p), std::invalid_argument);  // 3 query heads on 2 KV heads
  Problem short_cache(Shape{2, 2, 32, 4, 4});
  try {
    one_pass::reference<float, bfloat>(one_pass::Dims{2, 2, 32, 5, 4}, std::span<const float>(short_cache.q),
                                       std::span<const bfloat>(short_cache.k), std::span<const bfloat>(short_cache.v),
                                       std::span<float>(short_cache.q));
    FAIL() << "kv_len > capacity was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("the cache must hold kv_len rows per head"), std::string::npos) << e.what();
  }
}

TEST(SdpaVector2PassReference, TinyGqaBlocksHoldOneKeyEach) {
  Problem p = tiny_gqa();
  Blocks b = run_partial(p, 2, 1.0f);  // block 0: key 0, block 1: key 1
  // head 0: scores (ln 3, 0): each block's max is its score, its sum exp(0) = 1, its output its value
  EXPECT_NEAR(b.max[0], std::log(3.0f), 1e-6);
  EXPECT_EQ(b.max[1], 0.0f);
  EXPECT_EQ(b.sum[0], 1.0f);
  EXPECT_EQ(b.sum[1], 1.0f);
  EXPECT_EQ(b.out[0 * 32 + 0], 1.0f);
  EXPECT_EQ(b.out[0 * 32 + 1], 2.0f);
  EXPECT_EQ(b.out[1 * 32 + 0], 3.0f);
  EXPECT_EQ(b.out[1 * 32 + 1], 4.0f);
  // head 2 reads KV head 1: block 0 scores ln 2 against v0 = (-1, 0)
  EXPECT_NEAR(b.max[2 * 2 + 0], std::log(2.0f), 1e-6);
  EXPECT_EQ(b.out[(2 * 2 + 0) * 32 + 0], -1.0f);
  expect_tiny_outputs(run_merge(b, 4, 2, 32));
}

TEST(SdpaVector2PassReference, BlocksWithoutKeysAreNeutral) {
  Problem p = tiny_gqa();
  Blocks b = run_partial(p, 4, 1.0f);  // blocks 2 and 3 see no key
  for (int h = 0; h < 4; ++h) {
    for (int blk = 2; blk < 4; ++blk) {
      EXPECT_EQ(b.max[h * 4 + blk], -kInf);
      EXPECT_EQ(b.sum[h * 4 + blk], 0.0f);
      for (int d = 0; d < 32; ++d) EXPECT_EQ(b.out[(h * 4 + blk) * 32 + d], 0.0f);
    }
  }
  expect_tiny_outputs(run_merge(b, 4, 4, 32));
}

TEST(SdpaVector2PassReference, MergeOfAHeadWithoutKeysIsZero) {
  Blocks b{std::vector<float>(2 * 3, 1.0f), std::vector<float>(2, -kInf), std::vector<float>(2, 0.0f)};
  std::vector<float> out = run_merge(b, 1, 2, 3);
  for (float x : out) EXPECT_EQ(x, 0.0f);
}

// Composition on realistic shapes: partial + merge equals the 1-pass result. Both are double
// sums; the 2-pass path also rounds each block's (max, sum, output) to f32, so 1e-6 absolute
// covers outputs of size ~1.
struct Composition {
  Shape shape;
  uint32_t blocks;
};

class SdpaVectorComposition : public testing::TestWithParam<Composition> {};

TEST_P(SdpaVectorComposition, TwoPassEqualsOnePass) {
  const Composition& c = GetParam();
  Problem p(c.shape);
  p.fill_random(c.shape.kv_len);
  std::vector<float> one = run_one_pass(p), two = run_two_pass(p, c.blocks);
  ASSERT_EQ(one.size(), two.size());
  for (size_t i = 0; i < one.size(); ++i) {
    ASSERT_FALSE(std::isnan(two[i])) << i;
    EXPECT_NEAR(two[i], one[i], 1e-6) << "element " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, SdpaVectorComposition,
                         testing::Values(Composition{{16, 8, 128, 1024, 1026}, 32},  // 1.7B decode
                                         Composition{{2, 1, 64, 4097, 4100}, 32},     // ragged last block
                                         Composition{{16, 8, 64, 33, 35}, 32},        // blocks without keys
                                         Composition{{4, 2, 128, 1, 2}, 8},           // one key
                                         Composition{{3, 3, 96, 31, 40}, 1}),         // one block
                         [](const testing::TestParamInfo<Composition>& info) {
                           const Composition& c = info.param;
                           return "h" + std::to_string(c.shape.n_heads) + "_kv" + std::to_string(c.shape.n_kv_heads) +
                                  "_d" + std::to_string(c.shape.head_dim) + "_len" + std::to_string(c.shape.kv_len) +
                                  "_blocks" + std::to_string(c.blocks);
                         });

}  // namespace sdpa_vector_test

namespace sdpa_vector_test {  // named: unity builds (tests/CMakeLists.txt)

// The glue encodes a caller that names no tuning with tuning_serving: sdpa_vector compiles the head
// dim in (D), so the default (TG 1024, D 128) serves head dim 128 and a head dim of 64 gets the
// entry point with D = 64 and the default's TG.
TEST(SdpaVectorTuning, AHeadDimPicksItsCompiledVariant) {
  one_pass::Types types;
  const one_pass::Tuning preferred;  // the spec's defaults
  one_pass::Dims dims{8, 2, 128, 100, 256};
  EXPECT_EQ(one_pass::tuning_serving(dims, types, preferred).D, 128u);
  dims.head_dim = 64;
  const one_pass::Tuning chosen = one_pass::tuning_serving(dims, types, preferred);
  EXPECT_EQ(chosen.D, 64u);
  EXPECT_EQ(chosen.TG, preferred.TG);
  EXPECT_STREQ(one_pass::entry_point(types, chosen), "sdpa_vector_f32_bf16_tg1024_d64");
  dims.head_dim = 80;  // no variant serves it: the default, which check_dims then rejects
  EXPECT_EQ(one_pass::tuning_serving(dims, types, preferred).D, preferred.D);
}

}  // namespace sdpa_vector_test
