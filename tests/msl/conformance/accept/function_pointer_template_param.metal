// A function pointer as a template parameter, and a function pointer parameter: code has no
// address space, so neither needs one (MSL 2.3+ allows function pointers).
#include <metal_stdlib>
using namespace metal;

float add(float a, float b) { return a + b; }
void scale(device const float* in, short k, thread float& out) { out = in[k] * 2.0f; }

template <typename T, T (*op)(T, T)>
T fold(T a, T b) { return op(a, b); }

template <typename T, void (*load)(device const T*, short, thread T&)>
T fetch(device const T* in, short k) {
  T v;
  load(in, k, v);
  return v;
}

kernel void run(device float* out [[buffer(0)]], device const float* in [[buffer(1)]],
                uint gid [[thread_position_in_grid]]) {
  out[gid] = fold<float, add>(in[gid], 1.0f) + fetch<float, scale>(in, short(gid));
}
