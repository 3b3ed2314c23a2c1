// expect: 7:3 exception handling (`try`/`catch`) is not supported | "Restrictions"
// expect: 8:21 exceptions (`throw`) are not supported | "Restrictions"
#include <metal_stdlib>
using namespace metal;

kernel void checked(device int* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  try {
    if (gid > 1024) throw 1;
    out[gid] = 1;
  } catch (int) {
    out[gid] = 0;
  }
}
