// Threadgroup-wide reductions as generated kernels write them: simd_sum within each
// simdgroup, partials through threadgroup memory, a barrier, then simd_sum over the partials.
#include <metal_stdlib>
using namespace metal;

template <typename T, uint TG>
[[kernel]] void row_sum(device const T* x [[buffer(0)]],
                        device float* out [[buffer(1)]],
                        constant uint& n [[buffer(2)]],
                        threadgroup float* partial [[threadgroup(0)]],
                        uint row [[threadgroup_position_in_grid]],
                        uint tid [[thread_position_in_threadgroup]],
                        uint lane [[thread_index_in_simdgroup]],
                        uint sg [[simdgroup_index_in_threadgroup]]) {
  float acc = 0.0f;
  for (uint i = tid; i < n; i += TG) acc += float(x[row * n + i]);
  acc = simd_sum(acc);
  if (lane == 0) partial[sg] = acc;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (sg == 0) {
    float v = lane < TG / 32 ? partial[lane] : 0.0f;
    v = simd_sum(v);
    if (lane == 0) out[row] = v;
  }
}

template [[host_name("row_sum_f32")]] [[kernel]] void row_sum<float, 256>(
    device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
    constant uint& n [[buffer(2)]], threadgroup float* partial [[threadgroup(0)]],
    uint row [[threadgroup_position_in_grid]], uint tid [[thread_position_in_threadgroup]],
    uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]]);
template [[host_name("row_sum_f16")]] [[kernel]] void row_sum<half, 128>(
    device const half* x [[buffer(0)]], device float* out [[buffer(1)]],
    constant uint& n [[buffer(2)]], threadgroup float* partial [[threadgroup(0)]],
    uint row [[threadgroup_position_in_grid]], uint tid [[thread_position_in_threadgroup]],
    uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]]);

// The same reduction without the barrier: simdgroup 0 reads partials that other simdgroups
// may not have written yet.
template <uint TG>
[[kernel]] void row_sum_no_barrier(device const float* x [[buffer(0)]],
                                   device float* out [[buffer(1)]],
                                   constant uint& n [[buffer(2)]],
                                   threadgroup float* partial [[threadgroup(0)]],
                                   uint row [[threadgroup_position_in_grid]],
                                   uint tid [[thread_position_in_threadgroup]],
                                   uint lane [[thread_index_in_simdgroup]],
                                   uint sg [[simdgroup_index_in_threadgroup]]) {
  float acc = 0.0f;
  for (uint i = tid; i < n; i += TG) acc += x[row * n + i];
  acc = simd_sum(acc);
  if (lane == 0) partial[sg] = acc;
  if (sg == 0) {
    float v = lane < TG / 32 ? partial[lane] : 0.0f;
    v = simd_sum(v);  // MARK:racy_simd_sum
    if (lane == 0) out[row] = v;
  }
}

template [[host_name("row_sum_no_barrier")]] [[kernel]] void row_sum_no_barrier<256>(
    device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
    constant uint& n [[buffer(2)]], threadgroup float* partial [[threadgroup(0)]],
    uint row [[threadgroup_position_in_grid]], uint tid [[thread_position_in_threadgroup]],
    uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]]);

// Each thread publishes a value and reads its neighbour one simdgroup up — with or without
// the barrier in between. Without it the result depends on the order threads run in.
template <bool WithBarrier>
[[kernel]] void rotate_by_simdgroup(device const float* x [[buffer(0)]],
                                    device float* out [[buffer(1)]],
                                    threadgroup float* tmp [[threadgroup(0)]],
                                    uint gid [[thread_position_in_grid]],
                                    uint tid [[thread_position_in_threadgroup]],
                                    uint tg_size [[threads_per_threadgroup]]) {
  tmp[tid] = x[gid] * 2.0f;
  if (WithBarrier) threadgroup_barrier(mem_flags::mem_threadgroup);
  out[gid] = tmp[(tid + 32) % tg_size];
}

template [[host_name("rotate_ok")]] [[kernel]] void rotate_by_simdgroup<true>(
    device const float*, device float*, threadgroup float*, uint, uint, uint);
template [[host_name("rotate_racy")]] [[kernel]] void rotate_by_simdgroup<false>(
    device const float*, device float*, threadgroup float*, uint, uint, uint);
