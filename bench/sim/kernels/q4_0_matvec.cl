// OpenCL C twin of q4_0_matvec (out/q4_0_matvec, the f32 TG 64 RPS 4 entry point) for the PoCL
// comparison in sim_bench: per group of 32 work-items (a simdgroup there) RPS rows, lane l taking
// blocks l, l + 32, ...; PoCL 3.1's CPU device has no cl_khr_subgroups, so the simd_sum is a
// local-memory tree reduction over each group of 32. Blocks: half d (read with vload_half, core
// OpenCL C) then 16 bytes of nibbles, byte j pairing x[j] (low nibble) with x[j + 16] (high).
#define TG 64
#define RPS 4
#define QK 32
#define BLOCK_BYTES 18

__kernel __attribute__((reqd_work_group_size(TG, 1, 1)))
void q4_0_matvec_f32_tg64_rps4(__global const uchar* w, __global const float* x, __global float* y,
                               const uint rows, const uint k) {
  __local float partial[RPS][TG];
  const uint tid = get_local_id(0), lane = tid % 32, sg = tid / 32;
  const uint blocks_per_row = k / QK;
  const uint row0 = (get_group_id(0) * (TG / 32) + sg) * RPS;
  float acc[RPS];
  for (uint r = 0; r < RPS; ++r) acc[r] = 0.0f;
  for (uint b = lane; b < blocks_per_row; b += 32) {
    __global const float* xb = x + b * QK;
    for (uint r = 0; r < RPS; ++r) {
      const uint row = min(row0 + r, rows - 1);
      __global const uchar* blk = w + ((size_t)row * blocks_per_row + b) * BLOCK_BYTES;
      const float d = vload_half(0, (__global const half*)blk);
      float qx = 0.0f;
      for (uint j = 0; j < QK / 2; ++j) {
        const int q = blk[2 + j];
        qx += (float)((q & 0xF) - 8) * xb[j] + (float)((q >> 4) - 8) * xb[j + QK / 2];
      }
      acc[r] += d * qx;
    }
  }
  for (uint r = 0; r < RPS; ++r) partial[r][tid] = acc[r];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = 16; s > 0; s >>= 1) {
    if (lane < s)
      for (uint r = 0; r < RPS; ++r) partial[r][tid] += partial[r][tid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lane == 0)
    for (uint r = 0; r < RPS; ++r)
      if (row0 + r < rows) y[row0 + r] = partial[r][tid];
}
#undef TG
#undef RPS
#undef QK
#undef BLOCK_BYTES
