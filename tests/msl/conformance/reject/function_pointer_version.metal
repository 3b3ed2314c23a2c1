// expect: 9:11 function pointers need MSL 2.3; this file targets MSL 2.2 | "Restrictions"
// msl-version: 2.2
#include <metal_stdlib>
using namespace metal;

float twice(float x) { return 2.0f * x; }

kernel void run(device float* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  float (*op)(float) = twice;
  out[gid] = op(out[gid]);
}
