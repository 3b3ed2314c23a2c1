// Threadgroup-wide argmax with argmax_combine's rules. Every thread returns the winner.
// `values` and `indices` hold TG / SIMD_SIZE elements each.
template <uint TG>
value_index tg_argmax(value_index candidate, threadgroup float* values, threadgroup uint* indices,
                      uint simd_lane, uint simd_group) {
  for (ushort offset = SIMD_SIZE / 2; offset > 0; offset /= 2) {
    value_index other = {simd_shuffle_xor(candidate.value, offset), simd_shuffle_xor(candidate.index, offset)};
    candidate = argmax_combine(candidate, other);
  }
  if (simd_lane == 0) {
    values[simd_group] = candidate.value;
    indices[simd_group] = candidate.index;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  uint slot = simd_lane < TG / SIMD_SIZE ? simd_lane : 0;
  candidate = {values[slot], indices[slot]};
  for (ushort offset = SIMD_SIZE / 2; offset > 0; offset /= 2) {
    value_index other = {simd_shuffle_xor(candidate.value, offset), simd_shuffle_xor(candidate.index, offset)};
    candidate = argmax_combine(candidate, other);
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  return candidate;
}
