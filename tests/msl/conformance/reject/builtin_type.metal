// expect: 7:17 [[thread_position_in_grid]] cannot be declared as `float` | "Attributes for Built-in Variables"
// expect: 8:17 [[thread_index_in_simdgroup]] cannot be declared as `uint2` | "Attributes for Built-in Variables"
#include <metal_stdlib>
using namespace metal;

kernel void run(device float* out [[buffer(0)]],
                float gid [[thread_position_in_grid]],
                uint2 lane [[thread_index_in_simdgroup]]) {
  out[uint(gid)] = float(lane.x);
}
