// [[threads_per_simdgroup]], MLX's way (arg_reduce.metal): the simdgroup width, read by a
// shuffle-down reduction instead of a literal 32.
#include <metal_stdlib>
using namespace metal;

kernel void simd_width_sums(device const float* x [[buffer(0)]], device float* sums [[buffer(1)]],
                            device uint* widths [[buffer(2)]], uint gid [[thread_position_in_grid]],
                            uint simd_size [[threads_per_simdgroup]],
                            ushort simd_lane [[thread_index_in_simdgroup]]) {
  float v = x[gid];
  for (uint offset = simd_size / 2; offset > 0; offset /= 2) v += simd_shuffle_down(v, ushort(offset));
  if (simd_lane == 0) sums[gid / simd_size] = v;
  widths[gid] = simd_size;
}
