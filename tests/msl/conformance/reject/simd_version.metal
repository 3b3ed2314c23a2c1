// expect: 7:14 SIMD-group function `simd_sum` needs MSL 2.0 | "SIMD-Group Functions"
// msl-version: 1.2
#include <metal_stdlib>
using namespace metal;

kernel void total(device float* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  out[gid] = simd_sum(out[gid]);
}
