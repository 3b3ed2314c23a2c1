// What g++ does not accept as clang and Metal do, for the simulator's copy of a hand-written file:
// GNU array range designators (ggml's `float S[NQ] = { [0 ... NQ-1] = 0.0f };`) and a threadgroup
// array declared with an initializer (MLX layer_norm's `= {0}`), which Metal does not run.
#include <metal_stdlib>
using namespace metal;

// Row i of y: the N elements the designators give (a later range overrides an earlier one, the
// rest are zero), plus x[i].
template <typename T, short N>
kernel void ranges(device const T* x [[buffer(0)]], device T* y [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  T s[N] = { [1 ... N - 2] = T(2), [N/2 ... N/2 + 1] = -T(3) };
  for (short k = 0; k < N; ++k) y[i * N + k] = s[k] + x[i];
}

// Reads its threadgroup array before any thread wrote it: the initializer does not count.
kernel void initialized_threadgroup(device float* y [[buffer(0)]], uint i [[thread_index_in_threadgroup]],
                                    uint g [[threadgroup_position_in_grid]]) {
  threadgroup float partial[32] = {0};
  y[g * 32 + i] = partial[i] + 1.0f;
}

template [[host_name("ranges_float_8")]] kernel void ranges<float, 8>(device const float*, device float*, uint);
template [[host_name("ranges_half_8")]] kernel void ranges<half, 8>(device const half*, device half*, uint);
