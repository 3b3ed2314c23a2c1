// The decode_layer_q4_0 family's reference (the layer's equations over dequantized q4_0 weights,
// written apart from its kernels) against the references of the kernels it borrows, chained by
// hand in its dispatch order, on one small GQA case at position 4 of 6 cache rows: the two
// statements of the layer agree within the family's tolerance, for the output and the cache rows.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "add_rms_norm/add_rms_norm_reference.h"
#include "decode_layer_attn_merge/decode_layer_attn_merge_reference.h"
#include "decode_layer_attn_partial/decode_layer_attn_partial_reference.h"
#include "decode_layer_head_norm/decode_layer_head_norm_reference.h"
#include "decode_layer_kv_cache_update/decode_layer_kv_cache_update_reference.h"
#include "decode_layer_q4_0/decode_layer_q4_0_reference.h"
#include "decode_layer_rms_norm/decode_layer_rms_norm_reference.h"
#include "decode_layer_rope/decode_layer_rope_reference.h"
#include "layer_chain_support.h"
#include "q4_0_matvec/q4_0_matvec_reference.h"
#include "residual_add/residual_add_reference.h"
#include "swiglu/swiglu_reference.h"

namespace decode_layer_q4_0_chain {  // named: unity builds (tests/CMakeLists.txt)

namespace kernels = mtlgen::kernels;
using layer_chain::expect_close;
using layer_chain::tolerance;
using mtlgen::bfloat;
namespace td = mtlgen::testdata;

template <typename T>
std::vector<T> filled(size_t n, td::Dist dist, double a, double b, const std::string& name) {
  return layer_chain::filled<T>(n, layer_chain::fill(dist, a, b), 167, name);
}

// rows x cols / 32 q4_0 blocks (a half scale in [-0.03, 0.03], then 16 bytes of nibbles), every
// nibble value drawn.
std::vector<uint8_t> q4_0_matrix(uint32_t rows, uint32_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> scale(-0.03f, 0.03f);
  std::vector<uint8_t> bytes(size_t(rows) * (cols / 32) * 18);
  for (size_t b = 0; b < bytes.size(); b += 18) {
    const mtlgen::half d(scale(rng));
    std::memcpy(&bytes[b], &d, sizeof d);
    for (size_t i = 2; i < 18; ++i) bytes[b + i] = uint8_t(rng());
  }
  return bytes;
}

// The family's inputs: decode_layer_q4_0's position_4_h128 in miniature.
template <typename T>
struct Layer {
  kernels::decode_layer_q4_0::Dims dims{64, 4, 2, 32, 96, 5, 6, 2};  // hidden .. blocks, as the spec lists them
  uint32_t qkv_rows = (dims.n_heads + 2 * dims.n_kv_heads) * dims.head_dim;
  size_t cache = size_t(dims.n_kv_heads) * dims.capacity * dims.head_dim;
  std::vector<T> x = filled<T>(dims.hidden, td::Dist::normal, 0, 1, "x");
  std::vector<T> attn_norm = filled<T>(dims.hidden, td::Dist::uniform, 0.5, 1.5, "attn_norm");
  std::vector<uint8_t> w_qkv = q4_0_matrix(qkv_rows, dims.hidden, 1);
  std::vector<T> q_norm = filled<T>(dims.head_dim, td::Dist::uniform, 0.5, 1.5, "q_norm");
  std::vector<T> k_norm = filled<T>(dims.head_dim, td::Dist::uniform, 0.5, 1.5, "k_norm");
  std::vector<uint32_t> position{4};
  std::vector<T> k_cache = filled<T>(cache, td::Dist::normal, 0, 1, "k_cache");
  std::vector<T> v_cache = filled<T>(cache, td::Dist::normal, 0, 1, "v_cache");
  std::vector<uint8_t> w_o = q4_0_matrix(dims.hidden, dims.n_heads * dims.head_dim, 2);
  std::vector<T> mlp_norm = filled<T>(dims.hidden, td::Dist::uniform, 0.5, 1.5, "mlp_norm");
  std::vector<uint8_t> w_gate = q4_0_matrix(dims.inter, dims.hidden, 3);
  std::vector<uint8_t> w_up = q4_0_matrix(dims.inter, dims.hidden, 4);
  std::vector<uint8_t> w_down = q4_0_matrix(dims.hidden, dims.inter, 5);
  std::vector<T> out = std::vector<T>(dims.hidden);
};

template <typename T>
void run_family_reference(Layer<T>& l) {
  kernels::decode_layer_q4_0::reference<T>(l.dims, l.x, l.attn_norm, l.w_qkv, l.q_norm, l.k_norm, l.position,
                                           l.k_cache, l.v_cache, l.w_o, l.mlp_norm, l.w_gate, l.w_up, l.w_down, l.out);
}

// The spec's `dispatches:`, one borrowed kernel's reference each, over the intermediates the glue
// allocates.
template <typename T>
void run_members(Layer<T>& l) {
  const auto& d = l.dims;
  const uint32_t q_dim = d.n_heads * d.head_dim, heads = d.n_heads + d.n_kv_heads;
  std::vector<T> x_normed(d.hidden), qkv(l.qkv_rows), qk_normed(size_t(heads) * d.head_dim),
      qk_rotated(qk_normed.size());
  std::vector<float> partial_out(size_t(d.n_heads) * d.blocks * d.head_dim), block_max(size_t(d.n_heads) * d.blocks),
      block_sum(block_max.size());
  std::vector<T> attn(q_dim), attn_out(d.hidden), h(d.hidden), h_normed(d.hidden), gate(d.inter), up(d.inter),
      mlp(d.inter), mlp_out(d.hidden);

  kernels::decode_layer_rms_norm::reference<T>({1, d.hidden}, l.x, l.attn_norm, x_normed);
  kernels::q4_0_matvec::reference<T>({l.qkv_rows, d.hidden}, l.w_qkv, x_normed, qkv);
  kernels::decode_layer_head_norm::reference<T>({d.n_heads, d.n_kv_heads, d.head_dim}, qkv, l.q_norm, l.k_norm,
                                                qk_normed);
  kernels::decode_layer_rope::reference<T>({heads, d.head_dim}, qk_normed, l.position, qk_rotated);
  kernels::decode_layer_kv_cache_update::reference<T>({d.n_kv_heads, d.head_dim, d.capacity, d.n_heads, heads},
                                                      qk_rotated, qkv, l.position, l.k_cache, l.v_cache);
  kernels::decode_layer_attn_partial::reference<T>(
      {d.n_heads, d.n_kv_heads, d.head_dim, d.kv_len, d.capacity, d.blocks}, qk_rotated, l.k_cache, l.v_cache,
      partial_out, block_max, block_sum);
  kernels::decode_layer_attn_merge::reference<T>({d.n_heads, d.blocks, d.head_dim}, partial_out, block_max, block_sum,
                                                 attn);
  kernels::q4_0_matvec::reference<T>({d.hidden, q_dim}, l.w_o, attn, attn_out);
  kernels::add_rms_norm::reference<T>({1, d.hidden}, attn_out, l.x, l.mlp_norm, h, h_normed);
  kernels::q4_0_matvec::reference<T>({d.inter, d.hidden}, l.w_gate, h_normed, gate);
  kernels::q4_0_matvec::reference<T>({d.inter, d.hidden}, l.w_up, h_normed, up);
  kernels::swiglu::reference<T>({d.inter}, gate, up, mlp);
  kernels::q4_0_matvec::reference<T>({d.hidden, d.inter}, l.w_down, mlp, mlp_out);
  kernels::residual_add::reference<T>({d.hidden}, mlp_out, h, l.out);
}

// `tolerance`: the family's (specs/decode_layer_q4_0.yaml, tests.tolerance) for T.
template <typename T>
void expect_chain_agrees(const td::Tolerance& tolerance) {
  Layer<T> family, chained;
  run_family_reference(family);
  run_members(chained);
  expect_close(chained.out, family.out, tolerance, "out");
  expect_close(chained.k_cache, family.k_cache, tolerance, "k_cache");
  expect_close(chained.v_cache, family.v_cache, tolerance, "v_cache");
  // the chain moved the output off x: a layer that computed nothing would agree with itself too
  EXPECT_NE(std::memcmp(family.out.data(), family.x.data(), family.out.size() * sizeof(T)), 0);
}

TEST(DecodeLayerQ4_0Chain, BorrowedKernelsAgreeWithTheLayerReferenceFloat) {
  expect_chain_agrees<float>(tolerance(1.0e-4, 1.0e-4, 1.0e-10));
}

TEST(DecodeLayerQ4_0Chain, BorrowedKernelsAgreeWithTheLayerReferenceBfloat) {
  expect_chain_agrees<bfloat>(tolerance(3.2e-2, 1.6e-2, 1.0e-4));
}

}  // namespace decode_layer_q4_0_chain
