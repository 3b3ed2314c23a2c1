// The decode_layer family's reference (the layer's equations, written apart from its kernels) against
// its members' own references chained by hand in dispatch order, on one small GQA case at position 4
// of 6 cache rows: the two statements of the layer agree within the family's tolerance, for the
// output and for the cache rows the token writes.
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "decode_layer/decode_layer_reference.h"
#include "decode_layer_attn_merge/decode_layer_attn_merge_reference.h"
#include "decode_layer_attn_partial/decode_layer_attn_partial_reference.h"
#include "decode_layer_gate_up/decode_layer_gate_up_reference.h"
#include "decode_layer_head_norm/decode_layer_head_norm_reference.h"
#include "decode_layer_kv_cache_update/decode_layer_kv_cache_update_reference.h"
#include "decode_layer_matvec_residual/decode_layer_matvec_residual_reference.h"
#include "decode_layer_norm_matvec/decode_layer_norm_matvec_reference.h"
#include "decode_layer_rms_norm/decode_layer_rms_norm_reference.h"
#include "decode_layer_rope/decode_layer_rope_reference.h"
#include "layer_chain_support.h"

namespace {

namespace kernels = mtlgen::kernels;
using layer_chain::expect_close;
using layer_chain::fill;
using layer_chain::normal;
using layer_chain::tolerance;
using mtlgen::bfloat;
namespace td = mtlgen::testdata;

template <typename T>
std::vector<T> filled(size_t n, const td::Fill& f, const std::string& name) {
  return layer_chain::filled<T>(n, f, 149, name);
}

// The family's inputs: decode_layer's position_4_h128 in miniature.
template <typename T>
struct Layer {
  kernels::decode_layer::Dims dims{64, 4, 2, 32, 96, 5, 6, 2};  // hidden .. blocks, as the spec lists them
  uint32_t qkv_rows = (dims.n_heads + 2 * dims.n_kv_heads) * dims.head_dim;
  size_t cache = size_t(dims.n_kv_heads) * dims.capacity * dims.head_dim;
  td::Fill norm_weight = fill(td::Dist::uniform, 0.5, 1.5);
  std::vector<T> x = filled<T>(dims.hidden, normal(1), "x");
  std::vector<T> attn_norm = filled<T>(dims.hidden, norm_weight, "attn_norm");
  std::vector<T> w_qkv = filled<T>(size_t(qkv_rows) * dims.hidden, normal(0.125), "w_qkv");
  std::vector<T> q_norm = filled<T>(dims.head_dim, norm_weight, "q_norm");
  std::vector<T> k_norm = filled<T>(dims.head_dim, norm_weight, "k_norm");
  std::vector<uint32_t> position{4};
  std::vector<T> k_cache = filled<T>(cache, normal(1), "k_cache");
  std::vector<T> v_cache = filled<T>(cache, normal(1), "v_cache");
  std::vector<T> w_o = filled<T>(size_t(dims.hidden) * dims.n_heads * dims.head_dim, normal(0.09), "w_o");
  std::vector<T> mlp_norm = filled<T>(dims.hidden, norm_weight, "mlp_norm");
  std::vector<T> w_gate = filled<T>(size_t(dims.inter) * dims.hidden, normal(0.125), "w_gate");
  std::vector<T> w_up = filled<T>(size_t(dims.inter) * dims.hidden, normal(0.125), "w_up");
  std::vector<T> w_down = filled<T>(size_t(dims.hidden) * dims.inter, normal(0.1), "w_down");
  std::vector<T> out = std::vector<T>(dims.hidden);
};

template <typename T>
void run_family_reference(Layer<T>& l) {
  kernels::decode_layer::reference<T>(l.dims, l.x, l.attn_norm, l.w_qkv, l.q_norm, l.k_norm, l.position, l.k_cache,
                                      l.v_cache, l.w_o, l.mlp_norm, l.w_gate, l.w_up, l.w_down, l.out);
}

// The spec's `dispatches:`, one member reference each, over the intermediates the glue allocates.
template <typename T>
void run_members(Layer<T>& l) {
  const auto& d = l.dims;
  const uint32_t q_dim = d.n_heads * d.head_dim, heads = d.n_heads + d.n_kv_heads;
  std::vector<T> qkv(l.qkv_rows), qk_normed(size_t(heads) * d.head_dim), qk_rotated(qk_normed.size());
  std::vector<float> partial_out(size_t(d.n_heads) * d.blocks * d.head_dim), block_max(size_t(d.n_heads) * d.blocks),
      block_sum(block_max.size());
  std::vector<T> attn(q_dim), h(d.hidden), h_normed(d.hidden), mlp(d.inter);

  kernels::decode_layer_norm_matvec::reference<T>({l.qkv_rows, d.hidden}, l.w_qkv, l.x, l.attn_norm, qkv);
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
  kernels::decode_layer_matvec_residual::reference<T>({d.hidden, q_dim}, l.w_o, attn, l.x, h);
  kernels::decode_layer_rms_norm::reference<T>({1, d.hidden}, h, l.mlp_norm, h_normed);
  kernels::decode_layer_gate_up::reference<T>({d.inter, d.hidden}, l.w_gate, l.w_up, h_normed, mlp);
  kernels::decode_layer_matvec_residual::reference<T>({d.hidden, d.inter}, l.w_down, mlp, h, l.out);
}

// `tolerance`: the family's (specs/decode_layer.yaml, tests.tolerance) for T.
template <typename T>
void expect_chain_agrees(const td::Tolerance& tolerance) {
  Layer<T> family, chained;
  run_family_reference(family);
  run_members(chained);
  expect_close(chained.out, family.out, tolerance, "out");
  expect_close(chained.k_cache, family.k_cache, tolerance, "k_cache");
  expect_close(chained.v_cache, family.v_cache, tolerance, "v_cache");
}

TEST(DecodeLayerChain, MembersAgreeWithTheLayerReferenceFloat) {
  expect_chain_agrees<float>(tolerance(1.0e-4, 1.0e-4, 1.0e-10));
}

TEST(DecodeLayerChain, MembersAgreeWithTheLayerReferenceBfloat) {
  expect_chain_agrees<bfloat>(tolerance(3.2e-2, 1.6e-2, 1.0e-4));
}

}  // namespace
