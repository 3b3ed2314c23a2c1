// expect: 8:16 `goto` is not supported | "Restrictions"
#include <metal_stdlib>
using namespace metal;

kernel void jump(device int* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  int i = 0;
again:
  if (++i < 4) goto again;
  out[gid] = i;
}
