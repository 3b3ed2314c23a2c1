// OpenCL C twin of argmax.metal (one 1024-work-item workgroup per row) for the PoCL comparison
// in sim_bench: ties go to the lowest index, NaN is never selected, an all-NaN row gives 0.
#define TG 1024
#define NO_INDEX 0xFFFFFFFFu

__kernel __attribute__((reqd_work_group_size(TG, 1, 1)))
void argmax_f32_tg1024(__global const float* x, __global uint* out, const uint n) {
  __local float vals[TG];
  __local uint idxs[TG];
  const uint row = get_group_id(0), tid = get_local_id(0);
  __global const float* xr = x + (size_t)row * n;
  float best = -INFINITY;
  uint best_i = NO_INDEX;
  for (uint i = tid; i < n; i += TG) {
    const float v = xr[i];  // NaN compares false both ways, so it is never taken
    if (v > best || (v == best && i < best_i)) {
      best = v;
      best_i = i;
    }
  }
  vals[tid] = best;
  idxs[tid] = best_i;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = TG / 2; s > 0; s >>= 1) {
    if (tid < s) {
      const float v = vals[tid + s];
      const uint i = idxs[tid + s];
      if (v > vals[tid] || (v == vals[tid] && i < idxs[tid])) {
        vals[tid] = v;
        idxs[tid] = i;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (tid == 0) out[row] = idxs[0] == NO_INDEX ? 0 : idxs[0];
}
#undef TG
#undef NO_INDEX
