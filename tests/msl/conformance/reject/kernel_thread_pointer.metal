// expect: 5:17 a kernel argument cannot point into the `thread` address space | 4 "Address Spaces"
#include <metal_stdlib>
using namespace metal;

kernel void run(thread float* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  out[gid] = 1.0f;
}
