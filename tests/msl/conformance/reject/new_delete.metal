// expect: 7:23 `new` is not supported | "Restrictions"
// expect: 9:3 `delete` is not supported | "Restrictions"
#include <metal_stdlib>
using namespace metal;

kernel void heap(device float* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  thread float* tmp = new float(out[gid]);
  out[gid] = *tmp;
  delete tmp;
}
