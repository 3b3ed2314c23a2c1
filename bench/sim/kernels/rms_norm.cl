// OpenCL C twin of rms_norm.metal (f32, one 512-work-item workgroup per row) for the PoCL
// comparison in sim_bench: per row, each work-item sums squares of its strided elements, then a
// local-memory tree reduction, then every work-item scales its strided elements.
#define TG 512

__kernel __attribute__((reqd_work_group_size(TG, 1, 1)))
void rms_norm_f32_tg512(__global const float* x, __global const float* w, __global float* y,
                        const uint n, const float eps) {
  __local float partial[TG];
  const uint row = get_group_id(0), tid = get_local_id(0);
  __global const float* xr = x + (size_t)row * n;
  __global float* yr = y + (size_t)row * n;
  float acc = 0.0f;
  for (uint i = tid; i < n; i += TG) {
    const float v = xr[i];
    acc += v * v;
  }
  partial[tid] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = TG / 2; s > 0; s >>= 1) {
    if (tid < s) partial[tid] += partial[tid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float inv = rsqrt(partial[0] / (float)n + eps);
  for (uint i = tid; i < n; i += TG) yr[i] = xr[i] * inv * w[i];
}
#undef TG
