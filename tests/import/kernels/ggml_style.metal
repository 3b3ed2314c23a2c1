// Kernels in the style of ggml-metal: argument structs with 64-bit byte strides, `char*` buffers
// addressed with byte offsets, a quantized block struct, binding by parameter order.
#include <metal_stdlib>
using namespace metal;

#define QK4_0 32

typedef struct {
  half d;                 // scale
  uint8_t qs[QK4_0 / 2];  // element j in the low nibble of byte j, element j + 16 in the high one
} block_q4_0;

typedef struct {
  int32_t ne00;  // elements per row
  int32_t ne01;  // rows
  uint64_t nb01; // bytes between rows
  float eps;
} kargs_rms;

typedef struct {
  int32_t ne00;  // elements per row of the matrix (a multiple of QK4_0)
  int32_t ne01;  // rows of the matrix
  uint64_t nb01; // bytes between rows of blocks
  int32_t ne0;   // outputs
} kargs_mul_mv;

// Row RMS norm of f32 rows, one threadgroup per row, read as float4.
kernel void kernel_rms_norm_f32(
    constant kargs_rms & args,
    device const char * src0,
    device char * dst,
    threadgroup float * shmem_f32 [[threadgroup(0)]],
    uint tgpig [[threadgroup_position_in_grid]],
    ushort tpitg [[thread_position_in_threadgroup]],
    ushort sgitg [[simdgroup_index_in_threadgroup]],
    ushort tiisg [[thread_index_in_simdgroup]],
    ushort ntg [[threads_per_threadgroup]]) {
  if (sgitg == 0) {
    shmem_f32[tiisg] = 0.0f;
  }
  device const float4 * x = (device const float4 *) (src0 + tgpig * args.nb01);
  float sumf = 0.0f;
  for (int i00 = tpitg; i00 < args.ne00 / 4; i00 += ntg) {
    sumf += dot(x[i00], x[i00]);
  }
  sumf = simd_sum(sumf);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (tiisg == 0) {
    shmem_f32[sgitg] = sumf;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  sumf = shmem_f32[tiisg];
  sumf = simd_sum(sumf);
  const float scale = 1.0f / sqrt(sumf / args.ne00 + args.eps);
  device float4 * y = (device float4 *) (dst + tgpig * args.nb01);
  for (int i00 = tpitg; i00 < args.ne00 / 4; i00 += ntg) {
    y[i00] = x[i00] * scale;
  }
}

// q4_0 matrix times f32 vector: one simdgroup per N_R0 rows; rows past the end return early.
#define N_R0 2

kernel void kernel_mul_mv_q4_0_f32(
    constant kargs_mul_mv & args,
    device const char * src0,
    device const char * src1,
    device char * dst,
    uint tgpig [[threadgroup_position_in_grid]],
    ushort tiisg [[thread_index_in_simdgroup]]) {
  const int nb = args.ne00 / QK4_0;
  const int first_row = tgpig * N_R0;
  device const float * y = (device const float *) src1;
  float sumf[N_R0] = {0.0f};
  for (int row = 0; row < N_R0; ++row) {
    if (first_row + row >= args.ne01) {
      break;
    }
    device const block_q4_0 * x = (device const block_q4_0 *) (src0 + (first_row + row) * args.nb01);
    for (int ib = tiisg; ib < nb; ib += 32) {
      const float d = x[ib].d;
      float acc = 0.0f;
      for (int j = 0; j < QK4_0 / 2; ++j) {
        const uint8_t q = x[ib].qs[j];
        acc += (float((q & 0x0F)) - 8.0f) * y[ib * QK4_0 + j];
        acc += (float((q >> 4)) - 8.0f) * y[ib * QK4_0 + j + QK4_0 / 2];
      }
      sumf[row] += d * acc;
    }
  }
  device float * out = (device float *) dst;
  for (int row = 0; row < N_R0; ++row) {
    const float total = simd_sum(sumf[row]);
    if (tiisg == 0 && first_row + row < args.ne0) {
      out[first_row + row] = total;
    }
  }
}
