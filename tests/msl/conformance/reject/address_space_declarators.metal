// expect: 13:8 pointer type without an explicit address space | 4 "Address Spaces"
// expect: 16:49 reference type without an explicit address space | 4 "Address Spaces"
// expect: 17:29 pointer type without an explicit address space | 4 "Address Spaces"
// expect: 21:10 pointer type without an explicit address space | 4 "Address Spaces"
// The cast and the `CONST` (constant) parameter below say their address space: no finding.
// Operators in bounds and template arguments do not hide the declarators beside them.
#include <metal_stdlib>
using namespace metal;

template <bool B, typename T = void> struct when {};
template <typename T> struct when<true, T> { typedef T type; };
typedef struct {
  float* data;
  uint8_t qs[16 * 2];
} holder;
using Ref = typename when<(1 & 1) && true, float&>::type;
float apply(float (*f)(float* p), device float* x) { return f(nullptr) + x[0]; }
#define CONST constant

kernel void run(device float* out [[buffer(0)]], CONST float& k [[buffer(1)]], uint gid [[thread_position_in_grid]]) {
  float (*rows)[4] = (device float (*)[4])out;
  out[gid] = rows[0][0] + k;
}
// A reference to a pointer is accepted only where the pointer says its space.
void step(float*& p) { p += 1; }
// expect: 25:16 pointer type without an explicit address space | 4 "Address Spaces"
// expect: 25:17 reference type without an explicit address space | 4 "Address Spaces"
