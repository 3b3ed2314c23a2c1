// A template kernel whose `simd_max(m)` calls the simd function for T = float and wide_max.h's
// overload for T = wide_t (template_loops_test.cpp): the loop form checks which, per instantiation.
#include <metal_stdlib>
using namespace metal;

#include "wide_max.h"

template <typename T>
kernel void row_max(device const T* x [[buffer(0)]], device T* out [[buffer(1)]],
                    threadgroup T* partials [[threadgroup(0)]],
                    uint row [[threadgroup_position_in_grid]], uint i [[thread_index_in_threadgroup]],
                    uint n [[threads_per_threadgroup]], uint lane [[thread_index_in_simdgroup]],
                    uint sg [[simdgroup_index_in_threadgroup]]) {
  T m = x[row * n + i];
  m = simd_max(m);
  if (lane == 0) partials[sg] = m;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  m = simd_max(partials[lane % (n / 32)]);
  if (i == 0) out[row] = m;
}

template [[host_name("row_max_f32")]] kernel decltype(row_max<float>) row_max<float>;
template [[host_name("row_max_wide")]] kernel decltype(row_max<wide_t>) row_max<wide_t>;
