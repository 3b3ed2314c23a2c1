// MSL 4.0 kernels may use lambdas (MLX's Metal 4 kernels do); before 4.0 they are reported
// (reject/lambda.metal).
// msl-version: 4.0
#include <metal_stdlib>
using namespace metal;

kernel void scale(device float* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  auto twice = [](float x) { return 2.0f * x; };
  out[gid] = twice(out[gid]);
}
