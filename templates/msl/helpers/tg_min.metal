// Threadgroup-wide minimum (fmin semantics: NaN is ignored unless every value is NaN).
// Lanes past the last partial re-read partial 0, which leaves a minimum unchanged.
template <uint TG, typename T>
T tg_min(T value, threadgroup T* scratch, uint simd_lane, uint simd_group) {
  value = simd_min(value);
  if (simd_lane == 0) {
    scratch[simd_group] = value;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  value = scratch[simd_lane < TG / SIMD_SIZE ? simd_lane : 0];
  value = simd_min(value);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  return value;
}
