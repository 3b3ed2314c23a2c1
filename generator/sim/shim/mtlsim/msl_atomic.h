// MSL atomics: metal::atomic<T> (atomic_int, atomic_uint, atomic_bool, atomic_float) and the
// atomic_*_explicit functions. Threadgroups run on several OS threads at once, so every
// operation is a real std::atomic_ref operation (also on threadgroup memory, where it is
// merely cheap insurance). Layout equals T's, so a host buffer of uint can be bound as
// `device atomic_uint*`.
#pragma once
#pragma GCC system_header

#include <atomic>

#include "mtlsim/msl_scalar.h"

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
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8);
  alignas(std::atomic_ref<T>::required_alignment) T value;
};
using atomic_int = atomic<int>;
using atomic_uint = atomic<unsigned int>;
using atomic_bool = atomic<bool>;
using atomic_float = atomic<float>;
using atomic_ulong = atomic<unsigned long>;

namespace detail {
template <class T>
inline std::atomic_ref<T> atomic_ref_of(volatile atomic<T>* a) {
  return std::atomic_ref<T>(const_cast<T&>(a->value));
}
constexpr std::memory_order to_std(memory_order o) {
  switch (o) {
    case memory_order_relaxed: return std::memory_order_relaxed;
    case memory_order_acquire: return std::memory_order_acquire;
    case memory_order_release: return std::memory_order_release;
    case memory_order_acq_rel: return std::memory_order_acq_rel;
    default: return std::memory_order_seq_cst;
  }
}
// A failure order may not be release/acq_rel in C++.
constexpr std::memory_order to_std_failure(memory_order o) {
  return o == memory_order_release ? std::memory_order_relaxed
         : o == memory_order_acq_rel ? std::memory_order_acquire
                                     : to_std(o);
}
template <class T, class F>
inline T atomic_update(volatile atomic<T>* obj, F f, memory_order o) {
  std::atomic_ref<T> r = atomic_ref_of(obj);
  T old = r.load(std::memory_order_relaxed);
  while (!r.compare_exchange_weak(old, f(old), to_std(o), std::memory_order_relaxed)) {
  }
  return old;
}
}  // namespace detail

template <class T, class U>
inline void atomic_store_explicit(volatile atomic<T>* obj, U desired, memory_order o) {
  detail::atomic_ref_of(obj).store(T(desired), o == memory_order_relaxed ? std::memory_order_relaxed
                                                                         : std::memory_order_seq_cst);
}
template <class T>
inline T atomic_load_explicit(volatile atomic<T>* obj, memory_order o) {
  return detail::atomic_ref_of(obj).load(o == memory_order_relaxed ? std::memory_order_relaxed
                                                                   : std::memory_order_seq_cst);
}
template <class T, class U>
inline T atomic_exchange_explicit(volatile atomic<T>* obj, U desired, memory_order o) {
  return detail::atomic_ref_of(obj).exchange(T(desired), detail::to_std(o));
}
template <class T, class U>
inline bool atomic_compare_exchange_weak_explicit(volatile atomic<T>* obj, T* expected, U desired,
                                                  memory_order succ, memory_order fail) {
  return detail::atomic_ref_of(obj).compare_exchange_weak(*expected, T(desired), detail::to_std(succ),
                                                          detail::to_std_failure(fail));
}
template <class T, class U>
inline bool atomic_compare_exchange_strong_explicit(volatile atomic<T>* obj, T* expected, U desired,
                                                    memory_order succ, memory_order fail) {
  return detail::atomic_ref_of(obj).compare_exchange_strong(*expected, T(desired), detail::to_std(succ),
                                                            detail::to_std_failure(fail));
}

template <class T, class U>
inline T atomic_fetch_add_explicit(volatile atomic<T>* obj, U operand, memory_order o) {
  return detail::atomic_ref_of(obj).fetch_add(T(operand), detail::to_std(o));
}
template <class T, class U>
inline T atomic_fetch_sub_explicit(volatile atomic<T>* obj, U operand, memory_order o) {
  return detail::atomic_ref_of(obj).fetch_sub(T(operand), detail::to_std(o));
}
template <class T, class U>
inline T atomic_fetch_and_explicit(volatile atomic<T>* obj, U operand, memory_order o) {
  return detail::atomic_ref_of(obj).fetch_and(T(operand), detail::to_std(o));
}
template <class T, class U>
inline T atomic_fetch_or_explicit(volatile atomic<T>* obj, U operand, memory_order o) {
  return detail::atomic_ref_of(obj).fetch_or(T(operand), detail::to_std(o));
}
template <class T, class U>
inline T atomic_fetch_xor_explicit(volatile atomic<T>* obj, U operand, memory_order o) {
  return detail::atomic_ref_of(obj).fetch_xor(T(operand), detail::to_std(o));
}
template <class T, class U>
inline T atomic_fetch_min_explicit(volatile atomic<T>* obj, U operand, memory_order o) {
  const T v = T(operand);
  return detail::atomic_update(obj, [v](T old) { return v < old ? v : old; }, o);
}
template <class T, class U>
inline T atomic_fetch_max_explicit(volatile atomic<T>* obj, U operand, memory_order o) {
  const T v = T(operand);
  return detail::atomic_update(obj, [v](T old) { return old < v ? v : old; }, o);
}

}  // namespace metal
