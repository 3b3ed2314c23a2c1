// Kernels instantiated many ways, for the simulator's copy that keeps only what a module runs
// (pruned_instantiations_test.cpp): one per line, several per macro invocation, through a
// macro on one line. `shift` writes one element past its end when `n` is odd (line 14).
#include <metal_stdlib>
using namespace metal;

template <typename T>
kernel void scale(device const T* x [[buffer(0)]], device T* y [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  y[i] = x[i] * T(2);
}

template <typename T, int K>
kernel void shift(device const T* x [[buffer(0)]], device T* y [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  y[i + K] = x[i];
}

#define instantiate_scale(tname, type) \
  template [[host_name("scale_" #tname)]] [[kernel]] decltype(scale<type>) scale<type>;
#define instantiate_shift(tname, type, k) \
  template [[host_name("shift_" #tname "_" #k)]] [[kernel]] decltype(shift<type, k>) shift<type, k>;
#define instantiate_all(tname, type) instantiate_scale(tname, type) instantiate_shift(tname, type, 0) instantiate_shift(tname, type, 1)

template [[host_name("scale_int")]] [[kernel]] decltype(scale<int>) scale<int>;
instantiate_scale(float, float)
instantiate_all(half, half)
instantiate_all(uint, uint)
instantiate_shift(float, float, 1)
