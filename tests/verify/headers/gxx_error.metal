// Weights a vector through a helper of a local header that g++ refuses (gxx_error.h:7): the
// simulator's compile error names the header's own line, not its copy's 1000007.
#include <metal_stdlib>
using namespace metal;
#include "gxx_error.h"

kernel void gxx_error(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                      uint i [[thread_position_in_grid]]) {
  y[i] = x[i] * weight_of(i);
}
