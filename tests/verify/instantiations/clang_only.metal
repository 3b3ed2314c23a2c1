// A file whose every entry point the front end reads, one of which g++ does not compile
// (pruned_instantiations_test.cpp): `odd` calls a clang builtin. A spec of `twice` alone must not
// lose its kernel for it.
#include <metal_stdlib>
using namespace metal;

template <typename T>
kernel void twice(device const T* x [[buffer(0)]], device T* y [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  y[i] = x[i] * T(2);
}

template <typename T>
kernel void odd(device const T* x [[buffer(0)]], device T* y [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  y[i] = __builtin_elementwise_abs(x[i]);
}

template [[host_name("twice_float")]] [[kernel]] decltype(twice<float>) twice<float>;
template [[host_name("odd_float")]] [[kernel]] decltype(odd<float>) odd<float>;
