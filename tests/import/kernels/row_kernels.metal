// Row kernels in the style of MLX: templated on the storage type and the reads per thread,
// instantiated through host_name macros, scalars as `constant T&`, threadgroup arrays in bodies.
#include <metal_stdlib>
#include "row_utils.h"
using namespace metal;

// One threadgroup per row; each thread reads N_READS neighbours per step of the row.
template <typename T, int N_READS>
[[kernel]] void rms_rows(
    const device T* x [[buffer(0)]],
    const device T* w [[buffer(1)]],
    device T* out [[buffer(2)]],
    constant float& eps [[buffer(3)]],
    constant uint& row_size [[buffer(4)]],
    uint row [[threadgroup_position_in_grid]],
    uint tid [[thread_position_in_threadgroup]],
    uint tg_size [[threads_per_threadgroup]],
    uint lane [[thread_index_in_simdgroup]],
    uint group [[simdgroup_index_in_threadgroup]]) {
  using Acc = typename accum_of<T>::type;
  threadgroup float partial[kSimdWidth];
  threadgroup float inv_rms[1];

  const device T* xr = x + size_t(row) * row_size;
  device T* outr = out + size_t(row) * row_size;

  Acc sum_sq = 0;
  for (uint base = tid * N_READS; base < row_size; base += tg_size * N_READS) {
    _Pragma("unroll")
    for (int i = 0; i < N_READS; i++) {
      if (base + i < row_size) {
        Acc v = static_cast<Acc>(xr[base + i]);
        sum_sq += v * v;
      }
    }
  }
  float total = threadgroup_total(sum_sq, partial, lane, group, (tg_size + kSimdWidth - 1) / kSimdWidth);
  if (tid == 0) {
    inv_rms[0] = metal::precise::rsqrt(total / float(row_size) + eps);
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  float scale = inv_rms[0];
  for (uint base = tid * N_READS; base < row_size; base += tg_size * N_READS) {
    for (int i = 0; i < N_READS; i++) {
      if (base + i < row_size) {
        outr[base + i] = static_cast<T>(static_cast<float>(xr[base + i]) * scale * static_cast<float>(w[base + i]));
      }
    }
  }
}

// Tiled transpose through a padded 2-D threadgroup tile (no bank conflicts on hardware).
template <typename T>
[[kernel]] void transpose_tiles(
    const device T* src [[buffer(0)]],
    device T* dst [[buffer(1)]],
    constant uint& rows [[buffer(2)]],
    constant uint& cols [[buffer(3)]],
    uint2 tg [[threadgroup_position_in_grid]],
    uint2 t [[thread_position_in_threadgroup]]) {
  threadgroup T tile[32][33];
  uint r = tg.y * 32 + t.y;
  uint c = tg.x * 32 + t.x;
  if (r < rows && c < cols) {
    tile[t.y][t.x] = src[r * cols + c];
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  uint tr = tg.x * 32 + t.y;  // row of the output = column of the input
  uint tc = tg.y * 32 + t.x;
  if (tr < cols && tc < rows) {
    dst[tr * rows + tc] = tile[t.x][t.y];
  }
}

// y = x * scale (+ bias when the pipeline is built with has_bias): an optional buffer.
constant bool has_bias [[function_constant(0)]];

template <typename T>
[[kernel]] void scale_shift(
    const device T* x [[buffer(0)]],
    device T* y [[buffer(1)]],
    const device T* bias [[buffer(2), function_constant(has_bias)]],
    constant float& scale [[buffer(3)]],
    constant uint& count [[buffer(4)]],
    uint i [[thread_position_in_grid]]) {
  if (i >= count) {
    return;
  }
  float v = static_cast<float>(x[i]) * scale;
  if (has_bias) {
    v += static_cast<float>(bias[i]);
  }
  // Negative zero stays negative zero: keep the sign bit of the product.
  uint bits = as_type<uint>(v);
  y[i] = static_cast<T>(select(v, as_type<float>(bits & 0x80000000u), v == 0.0f));
}

#define instantiate_rows(tname, type)                                                   \
  template [[host_name("rms_rows_" #tname)]] [[kernel]] decltype(rms_rows<type, 4>) rms_rows<type, 4>; \
  template [[host_name("transpose_" #tname)]] [[kernel]] decltype(transpose_tiles<type>) transpose_tiles<type>; \
  template [[host_name("scale_shift_" #tname)]] [[kernel]] decltype(scale_shift<type>) scale_shift<type>;

instantiate_rows(float32, float)
instantiate_rows(float16, half)
