// Every simd-group function, one output column per function and thread. Lanes at or above
// `active_lanes` return first, so the collectives run with only the remaining active lanes.
#include <metal_stdlib>
using namespace metal;

constant constexpr uint kFloatCols = 14;
constant constexpr uint kIntCols = 12;

[[kernel]] void simd_float_ops(device const float* x [[buffer(0)]],
                               device float* out [[buffer(1)]],
                               constant uint& active_lanes [[buffer(2)]],
                               uint gid [[thread_position_in_grid]],
                               uint lane [[thread_index_in_simdgroup]]) {
  if (lane >= active_lanes) return;
  const float v = x[gid];
  device float* o = out + gid * kFloatCols;
  o[0] = simd_sum(v);
  o[1] = simd_product(v);
  o[2] = simd_min(v);
  o[3] = simd_max(v);
  o[4] = simd_shuffle(v, (lane + 5) % 32);
  o[5] = simd_shuffle_down(v, 3);
  o[6] = simd_shuffle_up(v, 3);
  o[7] = simd_shuffle_xor(v, 5);
  o[8] = simd_broadcast(v, 7);
  o[9] = simd_broadcast_first(v);
  o[10] = simd_prefix_inclusive_sum(v);
  o[11] = simd_prefix_exclusive_sum(v);
  o[12] = simd_shuffle_rotate_down(v, 2);
  o[13] = simd_shuffle_rotate_up(v, 2);
}

[[kernel]] void simd_int_ops(device const int* x [[buffer(0)]],
                             device int* out [[buffer(1)]],
                             constant uint& active_lanes [[buffer(2)]],
                             uint gid [[thread_position_in_grid]],
                             ushort lane [[thread_index_in_simdgroup]]) {
  if (lane >= active_lanes) return;
  const int v = x[gid];
  device int* o = out + gid * kIntCols;
  o[0] = simd_sum(v);
  o[1] = simd_min(v);
  o[2] = simd_max(v);
  o[3] = simd_and(v);
  o[4] = simd_or(v);
  o[5] = simd_xor(v);
  o[6] = simd_any(v > 90) ? 1 : 0;
  o[7] = simd_all(v > -100) ? 1 : 0;
  o[8] = int(uint(ulong(simd_ballot(v > 0))));
  o[9] = simd_is_first() ? 1 : 0;
  o[10] = simd_prefix_exclusive_sum(v);
  o[11] = int(uint(ulong(simd_active_threads_mask())));
}

// Vector and half payloads go through the same collectives.
[[kernel]] void simd_vector_ops(device const float* x [[buffer(0)]],
                                device float4* out4 [[buffer(1)]],
                                device half* outh [[buffer(2)]],
                                uint gid [[thread_position_in_grid]],
                                uint lane [[thread_index_in_simdgroup]]) {
  const float v = x[gid];
  out4[gid * 2] = simd_sum(float4(v, 2.0f * v, -v, 1.0f));
  out4[gid * 2 + 1] = float4(simd_shuffle_xor(half4(half(v), half(lane), 0.5h, -1.0h), 1));
  outh[gid] = simd_max(half(v));
}
