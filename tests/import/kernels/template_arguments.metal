// Instantiations that differ in template arguments a spec cannot state as types or tunables:
// a vector type (`float4`) beside an integer, functors (`ArgMax<float>` against `ArgMin<float>`)
// and functions (ggml's dequantizers).
#include <metal_stdlib>
using namespace metal;

template <typename T> struct ArgMax { static constant constexpr int init = 0; };
template <typename T> struct ArgMin { static constant constexpr int init = 1; };

template <typename T, int N>
[[kernel]] void scale(device const T* in [[buffer(0)]], device T* out [[buffer(1)]],
                      uint i [[thread_position_in_grid]]) {
  out[i] = in[i] * T(N);
}
template [[host_name("scale_f4_2")]] [[kernel]] void scale<float4, 2>(device const float4*, device float4*, uint);
template [[host_name("scale_f4_3")]] [[kernel]] void scale<float4, 3>(device const float4*, device float4*, uint);

template <typename T, typename Op>
[[kernel]] void arg(device const T* in [[buffer(0)]], device T* out [[buffer(1)]],
                    uint i [[thread_position_in_grid]]) {
  out[i] = in[i] > T(0) ? T(Op::init) : T(0);
}
template [[host_name("argmax_f32")]] [[kernel]] void arg<float, ArgMax<float>>(device const float*, device float*, uint);
template [[host_name("argmin_f32")]] [[kernel]] void arg<float, ArgMin<float>>(device const float*, device float*, uint);

// ggml style: the dequantizer is a function-pointer template argument.
void deq_a(device const float* in, thread float& out) { out = in[0]; }
void deq_b(device const float* in, thread float& out) { out = in[0] * 2.0f; }
template <typename T, void (*deq)(device const float*, thread float&)>
kernel void dq(device const float* in [[buffer(0)]], device T* out [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  float v;
  deq(in + i, v);
  out[i] = T(v);
}
typedef decltype(dq<float, deq_a>) dq_t;
template [[host_name("dq_a_f32")]] kernel dq_t dq<float, deq_a>;
template [[host_name("dq_b_f32")]] kernel dq_t dq<float, deq_b>;
