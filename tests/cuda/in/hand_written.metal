// A hand-written kernel for the CUDA rewrite's snapshot: a template helper, a struct with a
// method, a threadgroup variable declared in a body, a function constant, vector types and
// builtins, half literals, and instantiations through a macro.
#include <metal_stdlib>
using namespace metal;

constant bool has_bias [[function_constant(0)]];
constant constexpr uint kSimd = 32;

struct Args {
  uint n;
  float scale;
  float scaled(float v) const { return v * scale; }
};

template <typename T>
inline float load4(device const T* x, uint i) {
  float4 v = float4(x[i], x[i + 1], x[i + 2], x[i + 3]);
  return dot(v, float4(1.0f));
}

inline half halved_plus_one(half v) { return v * 0.5h + 1H; }

template <typename T>
[[kernel]] void scaled_sum(device const T* x [[buffer(0)]],
                           device float* out [[buffer(1)]],
                           device const float* bias [[buffer(2), function_constant(has_bias)]],
                           constant Args& args [[buffer(3)]],
                           uint2 tgid [[threadgroup_position_in_grid]],
                           ushort lane [[thread_index_in_simdgroup]],
                           ushort sg [[simdgroup_index_in_threadgroup]]) {
  threadgroup float partial[kSimd];
  if (tgid.x * 4 >= args.n) return;
  float s = simd_sum(load4(x, tgid.x * 4 + lane * 0));
  if (lane == 0) partial[sg] = s;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (sg == 0 && lane == 0) out[tgid.x] = args.scaled(partial[0]) + (has_bias ? bias[0] : 0.0f);
}

#define instantiate(name, T) \
  template [[host_name(name)]] [[kernel]] void scaled_sum<T>(device const T*, device float*, \
      device const float*, constant Args&, uint2, ushort, ushort);
instantiate("scaled_sum_f32", float)
instantiate("scaled_sum_f16", half)
