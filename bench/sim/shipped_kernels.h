// Shipped kernels (the committed out/<kernel>/<kernel>.metal, simulator copies) dispatched by
// sim_bench: one translation unit each (shipped_<kernel>.cpp), since every generated file defines
// its own helpers (SIMD_SIZE, block structs) as Metal compiles each .metal alone. Each dispatch
// runs the kernel's loop form when `loops` is set and the front end made one, else fibers.
#pragma once

#include <cstdint>

#include "mtlsim/runtime.h"

namespace sim_bench {

// q4_0_matvec_f32_tg64_rps4 (the spec's default tuning): y[rows] = W[rows, k] (q4_0 blocks) x[k], at a
// 7B model's 4,096 x 4,096 projection (9.4 MB of weights, one decode step's matvec).
constexpr unsigned kQ4Rows = 4096, kQ4K = 4096, kQ4Tg = 64, kQ4Rps = 4;
constexpr unsigned kQ4BlockBytes = 18;  // half d + 16 bytes of nibbles
struct Q4Args {
  const uint8_t* w;
  const float* x;
  float* y;
};
mtlsim::DispatchResult dispatch_q4_0_matvec(Q4Args& args, int workers, bool loops);

// sdpa_vector_f32_bf16_tg1024_d128: 8 query heads over 8 KV heads (bf16 cache), 1,024 keys.
constexpr unsigned kSdpaHeads = 8, kSdpaKvHeads = 8, kSdpaD = 128, kSdpaKeys = 1024, kSdpaTg = 1024;
struct SdpaArgs {
  const float* q;
  const uint16_t *k, *v;  // bfloat bits, [kv_head][key][d], capacity = kSdpaKeys
  float* out;
};
bool sdpa_vector_has_loop_form();
mtlsim::DispatchResult dispatch_sdpa_vector(SdpaArgs& args, int workers, bool loops);

// rglru_scan_backward (f32, TG 32): its two dispatches, rglru_scan_checkpoints then
// rglru_scan_backward_segments, for batch 1 x seq_len 1,024 x dim 1,024, segments of 32 steps.
constexpr unsigned kScanBatch = 1, kScanLen = 1024, kScanDim = 1024, kScanSeg = 32, kScanTg = 32;
struct ScanArgs {
  const float *a, *b, *h0, *dy, *dh_final;
  float* checkpoints;  // [batch][seq_len / seg][dim]
  float *da, *db, *dh0;
};
mtlsim::DispatchResult dispatch_rglru_scan_backward(ScanArgs& args, int workers, bool loops);

}  // namespace sim_bench
