// Kernels defined in a header (row_sums.h), instantiated here, as MLX's softmax.metal does with
// softmax.h (template_loops_test.cpp).
#include <metal_stdlib>
using namespace metal;

#include "row_sums.h"

template [[host_name("row_total_f32")]] kernel decltype(row_total<float>) row_total<float>;
template [[host_name("row_total_f16")]] kernel decltype(row_total<half>) row_total<half>;
template [[host_name("row_total_all_f32")]] kernel decltype(row_total_all<float>) row_total_all<float>;
