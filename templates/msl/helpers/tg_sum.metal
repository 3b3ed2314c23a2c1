// Threadgroup-wide sum for a threadgroup of TG threads (a multiple of SIMD_SIZE): a simdgroup
// stage, then one simdgroup reduces the partial sums. Every thread returns the total. `scratch`
// holds TG / SIMD_SIZE elements; the trailing barrier lets the caller reuse it immediately.
template <uint TG, typename T>
T tg_sum(T value, threadgroup T* scratch, uint simd_lane, uint simd_group) {
  value = simd_sum(value);
  if (simd_lane == 0) {
    scratch[simd_group] = value;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  value = simd_lane < TG / SIMD_SIZE ? scratch[simd_lane] : T(0);
  value = simd_sum(value);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  return value;
}
