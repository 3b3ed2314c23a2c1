// expect: 7:20 a `threadgroup` kernel argument must be a pointer or reference | 4 "Address Spaces"
#include <metal_stdlib>
using namespace metal;

kernel void reduce(device float* out [[buffer(0)]],
                   threadgroup float* sums [[threadgroup(0)]],
                   threadgroup float scratch [[threadgroup(1)]],
                   uint lid [[thread_position_in_threadgroup]]) {
  sums[lid] = scratch;
  out[lid] = sums[0];
}
