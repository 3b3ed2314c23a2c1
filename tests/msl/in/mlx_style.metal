// MLX style: templates in a local header, entry points from nested host_name macros.
#include <metal_stdlib>
#include "mlx_softmax.h"

using namespace metal;

template <typename T, int BM, int BK>
[[kernel]] void tiled_copy(
    device const T* src [[buffer(0)]],
    device T* dst [[buffer(1)]],
    constant uint& n [[buffer(2)]],
    uint2 tid [[thread_position_in_threadgroup]],
    uint2 tgid [[threadgroup_position_in_grid]]) {
  threadgroup T tile[BM][BK + 1];
  threadgroup float* scratch_ptr = nullptr;
  tile[tid.y][tid.x] = src[(tgid.y * BM + tid.y) * n + tgid.x * BK + tid.x];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  dst[(tgid.y * BM + tid.y) * n + tgid.x * BK + tid.x] = tile[tid.y][tid.x];
  (void)scratch_ptr;
}

#define instantiate_kernel(name, func, ...) \
  template [[host_name(name)]] [[kernel]] decltype(func<__VA_ARGS__>) func<__VA_ARGS__>;

#define instantiate_softmax(name, itype) \
  instantiate_kernel("softmax_" #name, softmax_single_row, itype)

#define instantiate_tiled(tname, type, bm, bk) \
  instantiate_kernel("tiled_copy_" #tname "_" #bm "_" #bk, tiled_copy, type, bm, bk)

instantiate_softmax(float32, float)
instantiate_softmax(float16, half)
instantiate_tiled(float16, half, 32, 32)
instantiate_tiled(float32, float, 16, 8)
