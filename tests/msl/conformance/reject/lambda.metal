// expect: 7:16 lambda expressions are not supported | "Restrictions"
#include <metal_stdlib>
using namespace metal;

kernel void scale(device float* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  float factor = 2.0f;
  auto twice = [factor](float x) { return x * factor; };
  out[gid] = twice(out[gid]);
}
