// Row sums defined in a header, as MLX keeps its kernel templates (header_sums.metal includes it,
// template_loops_test.cpp): their loop forms go into the simulator's copy of this header, and a
// finding names this file's lines on either path. `row_total_all` reads all 32 partials, of which
// a threadgroup of 64 threads writes 2 (a planted bug, line 29), after `row_total`'s form.
#pragma once

template <typename T>
kernel void row_total(device const T* x [[buffer(0)]], device T* out [[buffer(1)]],
                      threadgroup float* partials [[threadgroup(0)]],
                      uint row [[threadgroup_position_in_grid]], uint i [[thread_index_in_threadgroup]],
                      uint n [[threads_per_threadgroup]], uint lane [[thread_index_in_simdgroup]],
                      uint sg [[simdgroup_index_in_threadgroup]]) {
  const float s = simd_sum(float(x[row * n + i]));
  if (lane == 0) partials[sg] = s;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  const float total = simd_sum(lane < n / 32 ? partials[lane] : 0.0f);
  if (i == 0) out[row] = T(total);
}

template <typename T>
kernel void row_total_all(device const T* x [[buffer(0)]], device T* out [[buffer(1)]],
                          threadgroup float* partials [[threadgroup(0)]],
                          uint row [[threadgroup_position_in_grid]], uint i [[thread_index_in_threadgroup]],
                          uint n [[threads_per_threadgroup]], uint lane [[thread_index_in_simdgroup]],
                          uint sg [[simdgroup_index_in_threadgroup]]) {
  const float s = simd_sum(float(x[row * n + i]));
  if (lane == 0) partials[sg] = s;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  const float total = simd_sum(partials[lane]);
  if (i == 0) out[row] = T(total);
}
