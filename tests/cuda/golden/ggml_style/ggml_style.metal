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
    mtl_float3   bias3;
} ggml_metal_kargs_norm;

__device__ bool has_bias                         ;
__device__ int  n_extra                          ;

__device__        void kernel_rms_norm(
        const ggml_metal_kargs_norm & args,
               const char * src0,
                     char * dst,
               const float * bias                                           ,
                    float  * shmem_f32                   ,
        uint   tgpig                                ,
        ushort tpitg                                  ,
        ushort sgitg                                  ,
        ushort tiisg                             ,
        ushort ntg                           ,
        uint   w                          ) {
           const float * x = (       const float *) (src0 + tgpig*args.nb01);
    float sumf = 0.0f;
    for (int i00 = tpitg; i00 < args.ne00; i00 += ntg) sumf += x[i00] * x[i00];
    sumf = simd_sum(sumf);
    if (tiisg == 0) shmem_f32[sgitg] = sumf;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const float scale = 1.0f/sqrt(shmem_f32[0] / args.ne00 + args.eps);
           float * y = (       float *) (dst + tgpig*args.nb01);
    for (int i00 = tpitg; i00 < args.ne00; i00 += ntg) {
        y[i00] = x[i00] * scale + (has_bias ? bias[i00] : 0.0f);
    }
    (void)w;
}

                       __device__                     
       void kernel_mul_mv_q4_0_f32(
               const block_q4_0 * x              ,
               const float * y,
               float * dst              ,
        const ggml_metal_kargs_norm & args,
        mtl_uint3 tgpig                                 ,
        ushort tiisg                              ) {
    __shared__ float partial[32];
    float sum = 0.0f;
    const int row = tgpig.x;
           const block_q4_0 & b = x[row];
    for (int j = 0; j < QK4_0 / 2; ++j) {
        sum += float(b.d) * ((b.qs[j] & 0x0F) - 8) * y[j];
        sum += float(b.d) * ((b.qs[j] >> 4) - 8) * y[j + QK4_0 / 2];
    }
    partial[tiisg] = sum;
    if (tiisg == 0) dst[row] = partial[0] + args.eps;
}
