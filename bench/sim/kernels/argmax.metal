// argmax over rows: ties go to the lowest index, NaN is never selected, an all-NaN row gives 0.
#include <metal_stdlib>
using namespace metal;

constant constexpr uint kNoIndex = 0xFFFFFFFFu;

template <uint TG>
[[kernel]] void argmax(device const float* x [[buffer(0)]],
                       device uint* out [[buffer(1)]],
                       constant uint& n [[buffer(2)]],
                       threadgroup float* vals [[threadgroup(0)]],
                       threadgroup uint* idxs [[threadgroup(1)]],
                       uint row [[threadgroup_position_in_grid]],
                       uint tid [[thread_position_in_threadgroup]],
                       uint lane [[thread_index_in_simdgroup]],
                       uint sg [[simdgroup_index_in_threadgroup]]) {
  device const float* xr = x + size_t(row) * n;
  float best = -INFINITY;
  uint best_i = kNoIndex;
  for (uint i = tid; i < n; i += TG) {
    const float v = xr[i];
    if (v > best || (v == best && i < best_i)) {
      best = v;
      best_i = i;
    }
  }
  const float m = simd_max(best);
  const uint cand = simd_min(best == m ? best_i : kNoIndex);
  if (lane == 0) {
    vals[sg] = m;
    idxs[sg] = cand;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  // every simdgroup reduces the partials (as MLX's helpers do), simdgroup 0 writes
  const float v = lane < TG / 32 ? vals[lane] : -INFINITY;
  const uint i = lane < TG / 32 ? idxs[lane] : kNoIndex;
  const float mm = simd_max(v);
  const uint c = simd_min(v == mm ? i : kNoIndex);
  if (sg == 0 && lane == 0) out[row] = c == kNoIndex ? 0 : c;
}

template [[host_name("argmax_f32_tg1024")]] [[kernel]] void argmax<1024>(
    device const float* x [[buffer(0)]], device uint* out [[buffer(1)]], constant uint& n [[buffer(2)]],
    threadgroup float* vals [[threadgroup(0)]], threadgroup uint* idxs [[threadgroup(1)]],
    uint row [[threadgroup_position_in_grid]], uint tid [[thread_position_in_threadgroup]],
    uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]]);

// A kernel that only switches fibers: every thread waits at `rounds` barriers.
[[kernel]] void barrier_loop(constant uint& rounds [[buffer(0)]]) {
  for (uint r = 0; r < rounds; ++r) threadgroup_barrier(mem_flags::mem_none);
}
