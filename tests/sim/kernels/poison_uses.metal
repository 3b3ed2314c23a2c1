// Poison (never-written threadgroup memory) that decides something: compiled with the
// instrumentation of mtlsim/poison_hooks.h (see tests/sim/CMakeLists.txt). In each kernel lanes
// 0-7 write their slot of `tmp` and lanes 8-31 read never-written ones.
#include <metal_stdlib>
using namespace metal;

// A prefix sum hands the poison to lanes 9-31, whose branch then depends on it.
[[kernel]] void poison_branch(device float* out [[buffer(0)]],
                              threadgroup float* tmp [[threadgroup(0)]],
                              uint lane [[thread_index_in_simdgroup]]) {
  if (lane < 8) tmp[lane] = float(lane) + 1.0f;
  simdgroup_barrier(mem_flags::mem_threadgroup);
  float offset = simd_prefix_exclusive_sum(tmp[lane]);
  if (offset > 100.0f) {  // MARK:poison_branch
    out[lane] = 1.0f;
  } else {
    out[lane] = 2.0f;
  }
}

// Lane l reads lane 31 - l: lanes 0-23 get poison through the shuffle and turn it into an index.
// Lanes 24-31 first compare their clean value, then convert it: neither is a poison use.
[[kernel]] void poison_index(device float* out [[buffer(0)]],
                             threadgroup float* tmp [[threadgroup(0)]],
                             uint lane [[thread_index_in_simdgroup]]) {
  if (lane < 8) tmp[lane] = float(lane);
  simdgroup_barrier(mem_flags::mem_threadgroup);
  float v = simd_shuffle(tmp[lane], ushort(31 - lane));
  uint i = uint(v);  // MARK:poison_index
  out[lane] = float(i % 4u);
}

// A comparison of the poison, then a conversion of it (on another line): both are reported.
[[kernel]] void poison_compare_then_index(device float* out [[buffer(0)]],
                                          threadgroup float* tmp [[threadgroup(0)]],
                                          uint lane [[thread_index_in_simdgroup]]) {
  if (lane < 8) tmp[lane] = float(lane);
  simdgroup_barrier(mem_flags::mem_threadgroup);
  float v = tmp[lane];
  float w = v < 0.5f ? 3.0f : 4.0f;  // MARK:then_compare
  int k = int(v);  // MARK:then_index
  out[lane] = w + float(k & 1);
}

// ggml's block cumsum pattern: the poison reaches lanes 9-31 of a prefix sum, but no lane whose
// result decides anything reads theirs.
[[kernel]] void poison_unused(device float* out [[buffer(0)]],
                              threadgroup float* tmp [[threadgroup(0)]],
                              uint lane [[thread_index_in_simdgroup]]) {
  if (lane < 8) tmp[lane] = float(lane);
  simdgroup_barrier(mem_flags::mem_threadgroup);
  float offsets = simd_prefix_exclusive_sum(tmp[lane]);
  float mine = simd_shuffle(offsets, ushort(lane % 8));
  out[lane] = mine > 3.0f ? mine : 0.0f;
}

// Half poison, compared after widening, and integer poison compared as it is.
[[kernel]] void poison_half_and_uint(device float* out [[buffer(0)]],
                                     threadgroup half* h [[threadgroup(0)]],
                                     threadgroup uint* counts [[threadgroup(1)]],
                                     uint lane [[thread_index_in_simdgroup]]) {
  if (lane < 8) {
    h[lane] = half(lane);
    counts[lane] = lane;
  }
  simdgroup_barrier(mem_flags::mem_threadgroup);
  float a = float(h[lane]) > 1.0f ? 1.0f : 0.0f;  // MARK:half_compare
  float b = counts[lane] > 3u ? 1.0f : 0.0f;  // MARK:uint_compare
  out[lane] = a + b;
}
