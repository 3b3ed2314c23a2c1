// expect: 7:45 [[buffer(31)]] is outside the buffer argument table | buffer argument table" (31)
// expect: 8:47 [[buffer(1)]] is already used by another argument | buffer argument table" (31)
#include <metal_stdlib>
using namespace metal;

kernel void copy(device const float* in [[buffer(1)]],
                 device float* out [[buffer(31)]],
                 device float* twice [[buffer(1)]],
                 uint gid [[thread_position_in_grid]]) {
  out[gid] = in[gid];
  twice[gid] = 2.0f * in[gid];
}
