// MSL atomics for nvcc: metal::atomic<T> (atomic_int, atomic_uint, atomic_bool, atomic_float,
// atomic_ulong) and the atomic_*_explicit functions, each a libcu++ cuda::atomic_ref operation at
// device scope (the CUDA toolkit's <cuda/atomic>; on threadgroup memory device scope is merely
// wider than needed). Layout equals T's, so a buffer of uint can be bound as `device atomic_uint*`
// and `(device atomic_float*)&out[i]` casts work as in MSL. Min and max go through compare-exchange:
// libcu++ has them for integers only, MSL for every atomic type.
#pragma once

#include <cuda/atomic>

namespace metal {

enum memory_order {
  memory_order_relaxed,
  memory_order_acquire,
  memory_order_release,
  memory_order_acq_rel,
  memory_order_seq_cst,
};

template <class T>
struct atomic {
  static_assert(sizeof(T) <= 8, "MSL atomics are at most 64 bits");
  alignas(cuda::atomic_ref<T>::required_alignment) T value;
};
using atomic_int = atomic<int>;
using atomic_uint = atomic<unsigned int>;
using atomic_bool = atomic<bool>;
using atomic_float = atomic<float>;
using atomic_ulong = atomic<unsigned long>;

namespace detail {
template <class T>
__device__ inline cuda::atomic_ref<T, cuda::thread_scope_device> atomic_ref_of(volatile atomic<T>* a) {
  return cuda::atomic_ref<T, cuda::thread_scope_device>(const_cast<T&>(a->value));
}
__device__ constexpr cuda::std::memory_order to_cuda(memory_order o) {
  switch (o) {
    case memory_order_relaxed: return cuda::std::memory_order_relaxed;
    case memory_order_acquire: return cuda::std::memory_order_acquire;
    case memory_order_release: return cuda::std::memory_order_release;
    case memory_order_acq_rel: return cuda::std::memory_order_acq_rel;
    default: return cuda::std::memory_order_seq_cst;
  }
}
// A failure order may not be release/acq_rel in C++.
__device__ constexpr cuda::std::memory_order to_cuda_failure(memory_order o) {
  return o == memory_order_release ? cuda::std::memory_order_relaxed
         : o == memory_order_acq_rel ? cuda::std::memory_order_acquire
                                     : to_cuda(o);
}
template <class T, class F>
__device__ inline T atomic_update(volatile atomic<T>* obj, F f, memory_order o) {
  auto r = atomic_ref_of(obj);
  T old = r.load(cuda::std::memory_order_relaxed);
  while (!r.compare_exchange_weak(old, f(old), to_cuda(o), cuda::std::memory_order_relaxed)) {
  }
  return old;
}
}  // namespace detail

template <class T, class U>
__device__ inline void atomic_store_explicit(volatile atomic<T>* obj, U desired, memory_order o) {
  detail::atomic_ref_of(obj).store(T(desired), o == memory_order_relaxed ? cuda::std::memory_order_relaxed
                                                                          : cuda::std::memory_order_seq_cst);
}
template <class T>
__device__ inline T atomic_load_explicit(volatile atomic<T>* obj, memory_order o) {
  return detail::atomic_ref_of(obj).load(o == memory_order_relaxed ? cuda::std::memory_order_relaxed
                                                                   : cuda::std::memory_order_seq_cst);
}
template <class T, class U>
__device__ inline T atomic_exchange_explicit(volatile atomic<T>* obj, U desired, memory_order o) {
  return detail::atomic_ref_of(obj).exchange(T(desired), detail::to_cuda(o));
}
template <class T, class U>
__device__ inline bool atomic_compare_exchange_weak_explicit(volatile atomic<T>* obj, T* expected, U desired,
                                                             memory_order succ, memory_order fail) {
  return detail::atomic_ref_of(obj).compare_exchange_weak(*expected, T(desired), detail::to_cuda(succ),
                                                          detail::to_cuda_failure(fail));
}
template <class T, class U>
__device__ inline bool atomic_compare_exchange_strong_explicit(volatile atomic<T>* obj, T* expected, U desired,
                                                               memory_order succ, memory_order fail) {
  return detail::atomic_ref_of(obj).compare_exchange_strong(*expected, T(desired), detail::to_cuda(succ),
                                                            detail::to_cuda_failure(fail));
}
template <class T, class U>
__device__ inline T atomic_fetch_add_explicit(volatile atomic<T>* obj, U operand, memory_order o) {
  return detail::atomic_ref_of(obj).fetch_add(T(operand), detail::to_cuda(o));
}
template <class T, class U>
__device__ inline T atomic_fetch_sub_explicit(volatile atomic<T>* obj, U operand, memory_order o) {
  return detail::atomic_ref_of(obj).fetch_sub(T(operand), detail::to_cuda(o));
}
template <class T, class U>
__device__ inline T atomic_fetch_and_explicit(volatile atomic<T>* obj, U operand, memory_order o) {
  return detail::atomic_ref_of(obj).fetch_and(T(operand), detail::to_cuda(o));
}
template <class T, class U>
__device__ inline T atomic_fetch_or_explicit(volatile atomic<T>* obj, U operand, memory_order o) {
  return detail::atomic_ref_of(obj).fetch_or(T(operand), detail::to_cuda(o));
}
template <class T, class U>
__device__ inline T atomic_fetch_xor_explicit(volatile atomic<T>* obj, U operand, memory_order o) {
  return detail::atomic_ref_of(obj).fetch_xor(T(operand), detail::to_cuda(o));
}
template <class T, class U>
__device__ inline T atomic_fetch_min_explicit(volatile atomic<T>* obj, U operand, memory_order o) {
  const T v = T(operand);
  return detail::atomic_update(obj, [v](T old) { return v < old ? v : old; }, o);
}
template <class T, class U>
__device__ inline T atomic_fetch_max_explicit(volatile atomic<T>* obj, U operand, memory_order o) {
  const T v = T(operand);
  return detail::atomic_update(obj, [v](T old) { return old < v ? v : old; }, o);
}

}  // namespace metal
