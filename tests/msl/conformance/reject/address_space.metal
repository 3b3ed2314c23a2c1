// expect: 11:18 pointer type without an explicit address space | 4 "Address Spaces"
// expect: 12:16 reference type without an explicit address space | 4 "Address Spaces"
// expect: 14:8 pointer type without an explicit address space | 4 "Address Spaces"
// expect: 16:14 pointer type without an explicit address space | 4 "Address Spaces"
// expect: 17:34 pointer type without an explicit address space | 4 "Address Spaces"
// expect: 21:8 pointer type without an explicit address space | 4 "Address Spaces"
// expect: 23:30 pointer type without an explicit address space | 4 "Address Spaces"
// expect: 24:24 pointer type without an explicit address space | 4 "Address Spaces"
#include <metal_stdlib>
using namespace metal;
float first(float* p) { return p[0]; }
void bump(float& x) { x += 1.0f; }
struct View {
  float* data;
};
typedef float* FloatPtr;
using ConstFloatPtr = const float*;
template <typename T> T pick(T a) { return a; }

kernel void run(device float* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  float* local = out;
  device char* bytes = (device char*)out;
  device float* same = (float*)bytes;
  out[gid] = pick<float*>(local)[0] + same[0];
}
