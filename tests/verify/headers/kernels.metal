// A row sum whose last step lies in a local header (sum_helpers.h:7) and reads 32 partials of
// which 64 threads wrote 2 (a planted bug): verify names the header's line, not this file's.
#include <metal_stdlib>
#include "sum_helpers.h"
using namespace metal;

kernel void header_sum(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                       uint i [[thread_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]],
                       uint sg [[simdgroup_index_in_threadgroup]]) {
  threadgroup float partials[32];
  float s = simd_sum(x[i]);
  if (lane == 0) partials[sg] = s;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  float total = sum_partials(partials, lane);
  if (i == 0) out[0] = total;
}
