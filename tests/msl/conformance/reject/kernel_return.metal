// expect: 5:8 a kernel function must return void | 5.1 "Functions"
#include <metal_stdlib>
using namespace metal;

kernel float total(device const float* in [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  return in[gid];
}
