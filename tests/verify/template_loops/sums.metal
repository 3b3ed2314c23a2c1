// Row sums in ggml's pattern, for the loop form of a hand-written template kernel
// (template_loops_test.cpp): a macro the body defines for itself names the function constant it
// reads and is #undef-ed at the body's end (ggml's FC_OP), another is #undef-ed after the
// kernel's instantiations; the loop form, inserted after the kernel, must see both.
// `row_sum_all` reads all 32 partials, of which a threadgroup of 64 threads writes 2 (a planted
// bug, line 45): the lines after a kernel's inserted form keep their numbers.
#include <metal_stdlib>
using namespace metal;

constant short FC_sums_mean [[function_constant(7)]];

#define SIMD_WIDTH 32

template <typename T>
kernel void row_sum(device const T* x [[buffer(0)]], device T* out [[buffer(1)]],
                    threadgroup float* partials [[threadgroup(0)]],
                    uint row [[threadgroup_position_in_grid]], uint i [[thread_index_in_threadgroup]],
                    uint n [[threads_per_threadgroup]], uint lane [[thread_index_in_simdgroup]],
                    uint sg [[simdgroup_index_in_threadgroup]]) {
#define FC_MEAN FC_sums_mean
  const float s = simd_sum(float(x[row * n + i]));
  if (lane == 0) partials[sg] = s;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  const float total = simd_sum(lane < n / SIMD_WIDTH ? partials[lane] : 0.0f);
  if (i == 0) out[row] = T(FC_MEAN ? total / float(n) : total);
#undef FC_MEAN
}

typedef decltype(row_sum<float>) row_sum_t;

template [[host_name("row_sum_f32")]] kernel row_sum_t row_sum<float>;
template [[host_name("row_sum_f16")]] kernel decltype(row_sum<half>) row_sum<half>;

#undef SIMD_WIDTH

template <typename T>
kernel void row_sum_all(device const T* x [[buffer(0)]], device T* out [[buffer(1)]],
                        threadgroup float* partials [[threadgroup(0)]],
                        uint row [[threadgroup_position_in_grid]], uint i [[thread_index_in_threadgroup]],
                        uint n [[threads_per_threadgroup]], uint lane [[thread_index_in_simdgroup]],
                        uint sg [[simdgroup_index_in_threadgroup]]) {
  const float s = simd_sum(float(x[row * n + i]));
  if (lane == 0) partials[sg] = s;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  const float total = simd_sum(partials[lane]);
  if (i == 0) out[row] = T(total);
}

template [[host_name("row_sum_all_f32")]] kernel decltype(row_sum_all<float>) row_sum_all<float>;
