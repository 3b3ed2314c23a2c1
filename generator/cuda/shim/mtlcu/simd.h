// Simdgroup functions and barriers as warp intrinsics over the active mask (__activemask()).
// A full warp reduces by butterfly; a warp with inactive lanes folds the active lanes' values in
// lane order, so lanes that returned early take no part, as on Apple GPUs. A shuffle whose source
// lane is inactive or out of range returns the caller's own value (the simulator's rule).
#pragma once

#include "mtlcu/vec.h"

namespace mtlcu {

__device__ inline unsigned linear_thread_index() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
__device__ inline unsigned lane_id() { return linear_thread_index() % 32u; }

// __shfl_sync on any trivially copyable T, 32 bits at a time.
template <class T>
__device__ inline T shuffle_from(unsigned mask, T value, int source) {
  constexpr int kWords = (sizeof(T) + 3) / 4;
  unsigned words[kWords] = {};
  __builtin_memcpy(words, &value, sizeof(T));
  for (int i = 0; i < kWords; ++i) words[i] = __shfl_sync(mask, words[i], source);
  T out;
  __builtin_memcpy(&out, words, sizeof(T));
  return out;
}

// The value of lane `source`, or the caller's own where that lane is inactive or out of range.
template <class T>
__device__ inline T shuffle_checked(unsigned mask, T value, int source) {
  bool valid = source >= 0 && source < 32 && ((mask >> source) & 1u);
  T got = shuffle_from(mask, value, valid ? source : int(lane_id()));
  return valid ? got : value;
}

template <class T>
__device__ inline T combine_max(T a, T b) {
  return metal::max(a, b);
}
template <class T>
__device__ inline T combine_min(T a, T b) {
  return metal::min(a, b);
}

// Reduction over the active lanes; every active lane returns the same value.
template <class T, class F>
__device__ inline T reduce(T value, F combine) {
  unsigned mask = __activemask();
  if (mask == 0xffffffffu) {
    for (int offset = 16; offset > 0; offset /= 2) value = combine(value, shuffle_from(mask, value, int(lane_id()) ^ offset));
    return value;
  }
  int first = __ffs(mask) - 1;
  T total = shuffle_from(mask, value, first);
  for (int lane = first + 1; lane < 32; ++lane) {
    T other = shuffle_from(mask, value, (mask >> lane) & 1u ? lane : first);
    if ((mask >> lane) & 1u) total = combine(total, other);
  }
  return total;
}

// Sum of the active lanes below this one (exclusive) or up to it (inclusive), in lane order.
template <class T>
__device__ inline T prefix_sum(T value, bool inclusive) {
  unsigned mask = __activemask();
  int me = int(lane_id());
  T total = T(0);
  for (int lane = 0; lane < 32; ++lane) {
    if (!((mask >> lane) & 1u)) continue;
    T other = shuffle_from(mask, value, lane);
    if (lane < me || (inclusive && lane == me)) total = total + other;
  }
  return total;
}

}  // namespace mtlcu

namespace metal {

enum class mem_flags : unsigned { mem_none = 0, mem_device = 1, mem_threadgroup = 2, mem_texture = 4, mem_threadgroup_imageblock = 8 };
__host__ __device__ constexpr mem_flags operator|(mem_flags a, mem_flags b) {
  return mem_flags(unsigned(a) | unsigned(b));
}

__device__ inline void threadgroup_barrier(mem_flags = mem_flags::mem_none) { __syncthreads(); }
__device__ inline void simdgroup_barrier(mem_flags = mem_flags::mem_none) { __syncwarp(__activemask()); }

template <class T>
__device__ inline T simd_sum(T x) {
  return mtlcu::reduce(x, [](T a, T b) { return T(a + b); });
}
template <class T>
__device__ inline T simd_product(T x) {
  return mtlcu::reduce(x, [](T a, T b) { return T(a * b); });
}
template <class T>
__device__ inline T simd_max(T x) {
  return mtlcu::reduce(x, [](T a, T b) { return mtlcu::combine_max(a, b); });
}
template <class T>
__device__ inline T simd_min(T x) {
  return mtlcu::reduce(x, [](T a, T b) { return mtlcu::combine_min(a, b); });
}
template <class T>
__device__ inline T simd_prefix_exclusive_sum(T x) {
  return mtlcu::prefix_sum(x, false);
}
template <class T>
__device__ inline T simd_prefix_inclusive_sum(T x) {
  return mtlcu::prefix_sum(x, true);
}
template <class T, class I>
__device__ inline T simd_shuffle(T x, I lane) {
  return mtlcu::shuffle_checked(__activemask(), x, int(lane));
}
template <class T, class I>
__device__ inline T simd_broadcast(T x, I lane) {
  return mtlcu::shuffle_checked(__activemask(), x, int(lane));
}
template <class T, class I>
__device__ inline T simd_shuffle_xor(T x, I mask) {
  return mtlcu::shuffle_checked(__activemask(), x, int(mtlcu::lane_id() ^ unsigned(mask)));
}
template <class T, class I>
__device__ inline T simd_shuffle_down(T x, I delta) {
  return mtlcu::shuffle_checked(__activemask(), x, int(mtlcu::lane_id()) + int(delta));
}
template <class T, class I>
__device__ inline T simd_shuffle_up(T x, I delta) {
  return mtlcu::shuffle_checked(__activemask(), x, int(mtlcu::lane_id()) - int(delta));
}
template <class T>
__device__ inline T simd_broadcast_first(T x) {
  unsigned mask = __activemask();
  return mtlcu::shuffle_from(mask, x, __ffs(mask) - 1);
}
__device__ inline bool simd_is_first() { return int(mtlcu::lane_id()) == __ffs(__activemask()) - 1; }
__device__ inline bool simd_any(bool p) { return __any_sync(__activemask(), p); }
__device__ inline bool simd_all(bool p) { return __all_sync(__activemask(), p); }

struct simd_vote {
  unsigned long long bits;
  __device__ explicit operator unsigned long long() const { return bits; }
  __device__ bool all() const { return bits == __activemask(); }
  __device__ bool any() const { return bits != 0; }
};
__device__ inline simd_vote simd_ballot(bool p) { return {__ballot_sync(__activemask(), p)}; }

// Function constants the run gives a value count as defined (the launcher sets them all).
template <class T>
__device__ inline bool is_function_constant_defined(const T&) {
  return true;
}

}  // namespace metal
