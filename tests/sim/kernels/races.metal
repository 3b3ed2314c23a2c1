// Kernels for the exact race detector: each takes a `mode` that adds or removes the ordering
// that makes it race-free. Lines the tests expect in reports carry a `MARK:` comment.
#include <metal_stdlib>
using namespace metal;

// Every thread writes its slot, then reads its neighbour's.
// mode 0: no barrier; 1: threadgroup_barrier(mem_threadgroup); 2: threadgroup_barrier(mem_device)
// (does not order threadgroup memory); 3: simdgroup_barrier(mem_threadgroup) (orders one simdgroup).
[[kernel]] void neighbour_exchange(device float* out [[buffer(0)]],
                                   constant uint& mode [[buffer(1)]],
                                   threadgroup float* slots [[threadgroup(0)]],
                                   uint i [[thread_index_in_threadgroup]],
                                   uint n [[threads_per_threadgroup]],
                                   uint gid [[thread_position_in_grid]]) {
  slots[i] = float(i);  // MARK:exchange_write
  if (mode == 1) threadgroup_barrier(mem_flags::mem_threadgroup);
  if (mode == 2) threadgroup_barrier(mem_flags::mem_device);
  if (mode == 3) simdgroup_barrier(mem_flags::mem_threadgroup);
  out[gid] = slots[(i + 1) % n];  // MARK:exchange_read
}

// Thread 0 of each threadgroup adds one to out[0]: plainly (mode 0: threadgroups race), or with
// an atomic (mode 1: no race). `counter` aliases `out`.
[[kernel]] void accumulate(device float* out [[buffer(0)]],
                           device atomic_float* counter [[buffer(1)]],
                           constant uint& mode [[buffer(2)]],
                           uint i [[thread_index_in_threadgroup]]) {
  if (i != 0) return;
  if (mode == 0) {
    out[0] += 1.0f;  // MARK:accumulate_plain
  } else {
    atomic_fetch_add_explicit(counter, 1.0f, memory_order_relaxed);
  }
}

// Thread 0 writes its threadgroup's element of `shared`; after a barrier with `flags` every
// thread copies it: ordered only when flags include mem_device.
[[kernel]] void broadcast_device(device float* shared [[buffer(0)]],
                                 device float* out [[buffer(1)]],
                                 constant uint& flags [[buffer(2)]],
                                 uint tg [[threadgroup_position_in_grid]],
                                 uint i [[thread_index_in_threadgroup]],
                                 uint gid [[thread_position_in_grid]]) {
  if (i == 0) shared[tg] = float(tg);  // MARK:broadcast_write
  threadgroup_barrier(mem_flags(flags));
  out[gid] = shared[tg];  // MARK:broadcast_read
}

// Thread 0 fills shared[0]; after a barrier every thread reads it; then thread `writer` overwrites
// it, with (mode 1) or without (mode 0) a barrier after the reads.
[[kernel]] void readers_then_writer(device float* out [[buffer(0)]],
                                    constant uint& writer [[buffer(1)]],
                                    constant uint& mode [[buffer(2)]],
                                    threadgroup float* shared [[threadgroup(0)]],
                                    uint i [[thread_index_in_threadgroup]],
                                    uint gid [[thread_position_in_grid]]) {
  if (i == 0) shared[0] = 1.0f;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[gid] = shared[0];  // MARK:readers
  if (mode == 1) threadgroup_barrier(mem_flags::mem_threadgroup);
  if (i == writer) shared[0] = 2.0f;  // MARK:late_write
}

// Adjacent threads write adjacent bytes: no two threads touch one byte.
[[kernel]] void byte_stores(device uchar* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  out[gid] = uchar(gid);
}

// Every thread stores to out[0]: the same value (ggml's argmax style) when `same`, else its index.
[[kernel]] void one_result(device uint* out [[buffer(0)]], constant uint& same [[buffer(1)]],
                           uint gid [[thread_position_in_grid]]) {
  out[0] = same ? 7u : gid;  // MARK:one_result
}

// neighbour_exchange over a threadgroup variable declared in the body (as the MSL front end
// rewrites `threadgroup float sums[64];`), plus a 2-D tile whose half-vectors are written by two
// threads each (components of one vector are separate elements: no race).
// mode 0: no barrier; 1: threadgroup_barrier(mem_threadgroup).
[[kernel]] void variable_exchange(device float* out [[buffer(0)]],
                                  constant uint& mode [[buffer(1)]],
                                  uint i [[thread_index_in_threadgroup]],
                                  uint gid [[thread_position_in_grid]]) {
  auto& sums = ::mtlsim::threadgroup_local<float[64]>([]{}, "sums");  // threadgroup float sums[64];
  auto& pairs = ::mtlsim::threadgroup_local<float2[2][16]>([]{}, "pairs");  // threadgroup float2 pairs[2][16];
  sums[i] = float(i);  // MARK:variable_write
  pairs[i / 32][i % 32 / 2][i % 2] = float(i);
  if (mode == 1) threadgroup_barrier(mem_flags::mem_threadgroup);
  out[gid] = sums[(i + 1) % 64];  // MARK:variable_read
}
