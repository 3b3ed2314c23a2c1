// expect: 6:32 `bfloat` needs MSL 3.1; this file targets MSL 3.0 | 2.1 "Scalar Data Types"
// msl-version: 3.0
#include <metal_stdlib>
using namespace metal;

kernel void widen(device const bfloat* in [[buffer(0)]],
                  device float* out [[buffer(1)]],
                  uint gid [[thread_position_in_grid]]) {
  out[gid] = float(in[gid]);
}
