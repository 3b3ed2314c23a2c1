// Device and threadgroup atomics from many threadgroups at once.
#include <metal_stdlib>
using namespace metal;

[[kernel]] void atomic_accumulate(device atomic<float>* fsum [[buffer(0)]],
                                  device atomic_uint* count [[buffer(1)]],
                                  device atomic_int* max_gid [[buffer(2)]],
                                  device atomic_uint* per_group_total [[buffer(3)]],
                                  device const float* x [[buffer(4)]],
                                  threadgroup atomic_uint* local [[threadgroup(0)]],
                                  uint gid [[thread_position_in_grid]],
                                  uint tid [[thread_position_in_threadgroup]]) {
  if (tid == 0) atomic_store_explicit(local, 0u, memory_order_relaxed);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  atomic_fetch_add_explicit(fsum, x[gid], memory_order_relaxed);
  atomic_fetch_add_explicit(count, 1u, memory_order_relaxed);
  atomic_fetch_max_explicit(max_gid, int(gid), memory_order_relaxed);
  atomic_fetch_add_explicit(local, 1u, memory_order_relaxed);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (tid == 0) {
    atomic_fetch_add_explicit(per_group_total, atomic_load_explicit(local, memory_order_relaxed),
                              memory_order_relaxed);
  }
}

// A float max through compare-exchange on the bits, as kernels without atomic float max do.
[[kernel]] void atomic_cas_max(device atomic_uint* best_bits [[buffer(0)]],
                               device const float* x [[buffer(1)]],
                               uint gid [[thread_position_in_grid]]) {
  const float v = x[gid];
  uint expected = atomic_load_explicit(best_bits, memory_order_relaxed);
  while (as_type<float>(expected) < v &&
         !atomic_compare_exchange_weak_explicit(best_bits, &expected, as_type<uint>(v),
                                                memory_order_relaxed, memory_order_relaxed)) {
  }
}
