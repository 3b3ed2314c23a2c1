// What later MSL versions allow: recursion in compute code (2.4), function pointers (2.3),
// bfloat (3.1). With the default target, MSL 3.1, none is reported.
// msl-version: 3.1
#include <metal_stdlib>
using namespace metal;

uint depth(uint n) { return n == 0 ? 0 : 1 + depth(n - 1); }
float twice(float x) { return 2.0f * x; }

kernel void run(device const bfloat* in [[buffer(0)]],
                device float* out [[buffer(1)]],
                uint gid [[thread_position_in_grid]]) {
  float (*op)(float) = twice;
  auto widened = float(in[gid]);
  thread float& slot = widened;
  out[gid] = op(slot) + float(depth(gid)) + 1.0;
}
