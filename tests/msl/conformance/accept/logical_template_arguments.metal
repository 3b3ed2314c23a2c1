// `&&`, `&` and `*` inside template arguments are operators, not references or pointers.
#include <metal_stdlib>
using namespace metal;

template <bool B, typename T = void> struct when {};
template <typename T> struct when<true, T> { typedef T type; };
template <int N> struct lanes { static constant constexpr int value = N; };

template <typename T, int N>
typename when<(N > 0) && (N <= 32), T>::type first_lane(device const T* in) { return in[0]; }

template <typename T, int N, typename = typename when<N % 2 == 0 && N != 0>::type>
T even_lanes(T x) { return x * T(lanes<(N & 1) + N * 2>::value); }

kernel void run(device float* out [[buffer(0)]], device const float* in [[buffer(1)]],
                uint gid [[thread_position_in_grid]]) {
  out[gid] = first_lane<float, 4>(in) + even_lanes<float, 2>(in[gid]) + float(lanes<(4 & 1)>::value);
}
