// ggml style: an argument struct with 64-bit fields, char* buffers with byte offsets,
// a q4_0 block struct and a function-constant-guarded optional buffer.
#include <metal_stdlib>

using namespace metal;

#define QK4_0 32

typedef struct {
    half d;
    uint8_t qs[QK4_0 / 2];
} block_q4_0;

typedef struct {
    int32_t  ne00;
    int64_t  ne01;
    uint64_t nb01;
    float    eps;
    int32_t  ne02;
    packed_float3 scale3;
    float3   bias3;
} ggml_metal_kargs_norm;

constant bool has_bias [[function_constant(0)]];
constant int  n_extra  [[function_constant(1)]];

kernel void kernel_rms_norm(
        constant ggml_metal_kargs_norm & args,
        device const char * src0,
        device       char * dst,
        device const float * bias [[buffer(3), function_constant(has_bias)]],
        threadgroup float  * shmem_f32 [[threadgroup(0)]],
        uint   tgpig[[threadgroup_position_in_grid]],
        ushort tpitg[[thread_position_in_threadgroup]],
        ushort sgitg[[simdgroup_index_in_threadgroup]],
        ushort tiisg[[thread_index_in_simdgroup]],
        ushort ntg[[threads_per_threadgroup]],
        uint   w [[threads_per_simdgroup]]) {
    device const float * x = (device const float *) (src0 + tgpig*args.nb01);
    float sumf = 0.0f;
    for (int i00 = tpitg; i00 < args.ne00; i00 += ntg) sumf += x[i00] * x[i00];
    sumf = simd_sum(sumf);
    if (tiisg == 0) shmem_f32[sgitg] = sumf;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const float scale = 1.0f/sqrt(shmem_f32[0] / args.ne00 + args.eps);
    device float * y = (device float *) (dst + tgpig*args.nb01);
    for (int i00 = tpitg; i00 < args.ne00; i00 += ntg) {
        y[i00] = x[i00] * scale + (has_bias ? bias[i00] : 0.0f);
    }
    (void)w;
}

[[max_total_threads_per_threadgroup(1024)]]
kernel void kernel_mul_mv_q4_0_f32(
        device const block_q4_0 * x [[buffer(0)]],
        device const float * y,
        device float * dst [[buffer(1)]],
        constant ggml_metal_kargs_norm & args,
        uint3 tgpig [[threadgroup_position_in_grid]],
        ushort tiisg [[thread_index_in_simdgroup]]) {
    threadgroup float partial[32];
    float sum = 0.0f;
    const int row = tgpig.x;
    device const block_q4_0 & b = x[row];
    for (int j = 0; j < QK4_0 / 2; ++j) {
        sum += float(b.d) * ((b.qs[j] & 0x0F) - 8) * y[j];
        sum += float(b.d) * ((b.qs[j] >> 4) - 8) * y[j + QK4_0 / 2];
    }
    partial[tiisg] = sum;
    if (tiisg == 0) dst[row] = partial[0] + args.eps;
}
