// A kernel template in a header two directories below an include root, with a padded 2-D
// threadgroup tile declared in its body: the simulator must share `tile` across the threadgroup
// wherever the header lives (a per-thread array would transpose garbage).
#pragma once
#include <metal_stdlib>
#include "tiles/ops/tile_common.h"

using namespace metal;

template <typename T>
[[kernel]] void tile_transpose(
    const device T* src [[buffer(0)]],
    device T* dst [[buffer(1)]],
    constant uint& rows [[buffer(2)]],
    constant uint& cols [[buffer(3)]],
    uint2 tg [[threadgroup_position_in_grid]],
    uint2 t [[thread_position_in_threadgroup]]) {
  threadgroup T tile[TILE][TILE + 1];
  uint r = tg.y * TILE + t.y;
  uint c = tg.x * TILE + t.x;
  if (r < rows && c < cols) {
    tile[t.y][t.x] = src[r * cols + c];
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  uint tr = tg.x * TILE + t.y;
  uint tc = tg.y * TILE + t.x;
  if (tr < cols && tc < rows) {
    dst[tr * rows + tc] = tile[t.x][t.y];
  }
}
