// OpenCL C twin of sdpa_vector (out/sdpa_vector, the f32 output / bf16 cache / TG 1024 / D 128
// entry point) for the PoCL comparison in sim_bench: the same maths in an OpenCL shape rather than
// the kernel's simdgroups (PoCL 3.1's CPU device has no cl_khr_subgroups). One work-group per query
// head: the scaled query in local memory; work-item t scores keys t, t + TG, ... (at most MAX_KEYS
// in all); a local-memory tree reduction gives their max, the weights exp(s - max) and their sum;
// then work-item t adds weight * v[j][t % D] over every (TG / D)-th key, and the first D work-items
// add those TG / D partial outputs and divide by the sum. bf16 is the top half of an f32.
#define TG 1024
#define D 128
#define MAX_KEYS 4096

float bf16_to_f32(ushort b) { return as_float((uint)b << 16); }

__kernel __attribute__((reqd_work_group_size(TG, 1, 1)))
void sdpa_vector_f32_bf16_tg1024_d128(__global const float* q, __global const ushort* k_cache,
                                      __global const ushort* v_cache, __global float* out, const uint n_heads,
                                      const uint n_kv_heads, const uint kv_len, const uint capacity,
                                      const float scale) {
  __local float q_l[D];
  __local float score[MAX_KEYS];
  __local float red[TG];
  __local float part[TG];
  const uint head = get_group_id(0), t = get_local_id(0);
  const uint kv_head = head / (n_heads / n_kv_heads);
  const float qk_scale = scale != 0.0f ? scale : 1.0f / sqrt((float)D);
  __global const ushort* k_head = k_cache + (size_t)kv_head * capacity * D;
  __global const ushort* v_head = v_cache + (size_t)kv_head * capacity * D;
  if (t < D) q_l[t] = qk_scale * q[(size_t)head * D + t];
  barrier(CLK_LOCAL_MEM_FENCE);

  // scores and their max
  float m = -INFINITY;
  for (uint j = t; j < kv_len; j += TG) {
    __global const ushort* k_row = k_head + (size_t)j * D;
    float s = 0.0f;
    for (uint i = 0; i < D; ++i) s += q_l[i] * bf16_to_f32(k_row[i]);
    score[j] = s;
    m = fmax(m, s);
  }
  red[t] = m;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = TG / 2; s > 0; s >>= 1) {
    if (t < s) red[t] = fmax(red[t], red[t + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float head_max = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);

  // weights and their sum
  float sum = 0.0f;
  for (uint j = t; j < kv_len; j += TG) {
    const float wj = exp(score[j] - head_max);
    score[j] = wj;
    sum += wj;
  }
  red[t] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = TG / 2; s > 0; s >>= 1) {
    if (t < s) red[t] += red[t + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float head_sum = red[0];

  // output: element t % D over keys t / D, t / D + TG / D, ...
  const uint d = t % D;
  float o = 0.0f;
  for (uint j = t / D; j < kv_len; j += TG / D) o += score[j] * bf16_to_f32(v_head[(size_t)j * D + d]);
  part[t] = o;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (t < D) {
    float acc = 0.0f;
    for (uint p = 0; p < TG / D; ++p) acc += part[p * D + t];
    out[(size_t)head * D + t] = acc / head_sum;
  }
}
#undef TG
#undef D
#undef MAX_KEYS
