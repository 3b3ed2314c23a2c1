// expect: 5:10 the C++ standard library header <array> is not available | "Restrictions"
// expect: 10:3 the C++ standard library (`std::`) is not supported | "Restrictions"
#include <metal_stdlib>
using namespace metal;
#include <array>

kernel void copy(device const uint* in [[buffer(0)]],
                 device uint* out [[buffer(1)]],
                 uint gid [[thread_position_in_grid]]) {
  std::uint32_t v = in[gid];
  out[gid] = v;
}
