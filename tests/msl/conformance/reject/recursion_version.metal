// expect: 5:46 recursive calls need MSL 2.4 (compute functions only); this file targets MSL 2.3 | "Restrictions"
// msl-version: 2.3
#include <metal_stdlib>
using namespace metal;
uint depth(uint n) { return n == 0 ? 0 : 1 + depth(n - 1); }

kernel void run(device uint* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  out[gid] = depth(gid);
}
