// MSL idioms from real kernels (MLX, ggml, candle), as plain functions so tests can call them.
#include <metal_stdlib>
using namespace metal;

struct Params {
  uint n;
  float eps;
};

inline float4 mixed_precision(half4 h, constant Params& p) {
  float4 f = float4(h);
  f = max(f, 0.0f) + p.eps;
  f.x = metal::precise::sqrt(f.x);
  f.y = fast::exp(f.y - f.y);
  f[2] = clamp(f[2], 0.0f, 1.0f);
  return select(f, float4(-1.0f), isnan(f));
}

inline uint bits_roundtrip(float x) { return as_type<uint>(as_type<float>(as_type<uint>(x))); }

inline half2 unpack_q4_pair(device const uint16_t* block, half scale) {
  const uint16_t q = block[0];
  return half2(half(int(q & 0xF) - 8), half(int((q >> 4) & 0xF) - 8)) * scale;
}

inline float dot_bf16(thread const bfloat4& a, thread const bfloat4& b) {
  return dot(float4(a), float4(b));
}

inline int3 int_vector_ops(int3 a) {
  int3 b = a * 2 - 1;
  b.z = b.z % 3;
  b = min(b, int3(4)) | 1;
  return abs(b);
}

inline float limits_sum() {
  return numeric_limits<float>::max() * 0.0f + float(numeric_limits<half>::max()) +
         float(numeric_limits<bfloat>::lowest()) + numeric_limits<float>::epsilon();
}

inline half half_literals(half x) { return x * 0.5h + 1.0h; }
