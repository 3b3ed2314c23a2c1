// A pointer to an array, spelled with a declarator group and through a typedef.
#include <metal_stdlib>
using namespace metal;

typedef float row33[33];

kernel void run(device float* out [[buffer(0)]], uint gid [[thread_position_in_grid]],
                uint lid [[thread_position_in_threadgroup]]) {
  threadgroup float storage[32][33];
  threadgroup float (*tile)[33] = storage;
  threadgroup row33* same = storage;
  device float (*rows)[4] = (device float (*)[4])out;
  tile[lid][0] = out[gid];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  rows[0][0] = same[0][lid] + tile[0][lid];
}
