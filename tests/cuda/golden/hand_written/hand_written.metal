// A hand-written kernel for the CUDA rewrite's snapshot: a template helper, a struct with a
// method, a threadgroup variable declared in a body, a function constant, vector types and
// builtins, half literals, and instantiations through a macro.
#include <metal_stdlib>
using namespace metal;

__device__ bool has_bias                         ;
const constexpr uint kSimd = 32;

struct Args {
  uint n;
  float scale;
  __device__ float scaled(float v) const { return v * scale; }
};

template <typename T>
__device__ inline float load4(       const T* x, uint i) {
  mtl_float4 v = mtl_float4(x[i], x[i + 1], x[i + 2], x[i + 3]);
  return dot(v, mtl_float4(1.0f));
}

__device__ inline half halved_plus_one(half v) { return v * mtlcu::half_literal(0.5) + mtlcu::half_literal(1); }

template <typename T>
  __device__          void scaled_sum(       const T* x              ,
                                  float* out              ,
                                  const float* bias                                           ,
                           const Args& args              ,
                           mtl_uint2 tgid                                 ,
                           ushort lane                              ,
                           ushort sg                                   ) {
  __shared__ float partial[kSimd];
  if (tgid.x * 4 >= args.n) return;
  float s = simd_sum(load4(x, tgid.x * 4 + lane * 0));
  if (lane == 0) partial[sg] = s;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (sg == 0 && lane == 0) out[tgid.x] = args.scaled(partial[0]) + (has_bias ? bias[0] : 0.0f);
}

#define instantiate(name, T) \
                                                                                             \
                                                                  
instantiate("scaled_sum_f32", float)
instantiate("scaled_sum_f16", half)
