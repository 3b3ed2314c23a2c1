// ggml style: `device const char*` buffers with byte offsets, a block struct for a quantized
// format, an argument struct with 64-bit strides, a 2-D threadgroup tile, a function constant
// guarding an optional buffer, as_type and select, early return before SIMD-group functions.
#include <metal_stdlib>
using namespace metal;

#define QK4_0 32
typedef struct {
  half d;
  uint8_t qs[QK4_0 / 2];
} block_q4_0;

typedef struct {
  int64_t ne00;
  uint64_t nb01;
  uint64_t nb1;
  float scale;
} ggml_args;

constant bool has_bias [[function_constant(0)]];
constant constexpr float kvalues[4] = {-1.0f, -0.5f, 0.5f, 1.0f};

static inline float dequant(device const block_q4_0* b, int i) {
  const uint8_t q = b->qs[i / 2];
  const int nibble = (i & 1) ? (q >> 4) : (q & 0x0F);
  return float(b->d) * float(nibble - 8);
}

static inline void store_pair(device float* dst, thread const float2& v) {
  dst[0] = v.x;
  dst[1] = v.y;
}

kernel void kernel_mul_q4(
    device const char* src0 [[buffer(0)]],
    device const char* src1 [[buffer(1)]],
    device char* dst [[buffer(2)]],
    constant ggml_args& args [[buffer(3)]],
    device const float* bias [[buffer(4), function_constant(has_bias)]],
    uint3 tgpig [[threadgroup_position_in_grid]],
    ushort3 tpitg [[thread_position_in_threadgroup]],
    uint tiisg [[thread_index_in_simdgroup]]) {
  threadgroup float tile[8][33];
  const int64_t row = tgpig.x;
  if (row >= args.ne00) {
    return;
  }
  device const block_q4_0* x = (device const block_q4_0*)(src0 + row * args.nb01);
  device const float* y = (device const float*)(src1 + row * args.nb1);
  float sum = 0.0f;
  for (int i = int(tiisg); i < QK4_0; i += 32) {
    sum += dequant(x, i) * y[i];
  }
  tile[tpitg.y % 8][tpitg.x % 33] = sum;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  sum = simd_sum(sum);
  const uint bits = as_type<uint>(sum);
  sum = select(sum, 0.0f, bits == 0x7fc00000u);
  if (has_bias) {
    sum += bias[row];
  }
  device float* out = (device float*)(dst + row * args.nb1);
  if (tiisg == 0) {
    store_pair(out, float2(sum * args.scale, kvalues[0]));
  }
}
