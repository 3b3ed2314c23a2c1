// The ThreadSanitizer instrumentation ABI that g++ -fsanitize=thread emits calls to, implemented
// by this runtime instead of libtsan: kernels for exact race detection are compiled with the flag
// but not linked with libtsan, and these definitions resolve their calls. Plain accesses go to
// the active RaceDetector when they hit tracked memory (two compares otherwise); atomics perform
// the real operation (threadgroups may run on several OS threads) and are recorded the same way.
// Function entry/exit keep a call-site stack per simulated thread for the reports; initialisation
// is a no-op.
//
// Not built when this runtime is itself compiled with -fsanitize=thread: those names then belong
// to libtsan.
#include <cstddef>
#include <cstdint>

#include "race_detector.h"

#if defined(__SANITIZE_THREAD__)  // g++
#define MTLSIM_UNDER_TSAN 1
#elif defined(__has_feature)      // clang
#if __has_feature(thread_sanitizer)
#define MTLSIM_UNDER_TSAN 1
#endif
#endif

#if !defined(MTLSIM_UNDER_TSAN)

namespace mtlsim::detail {
namespace {

[[gnu::always_inline]] inline void on_access(const volatile void* p, size_t size, uint8_t kind, void* pc) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  const RaceHooks& h = race_hooks;
  if (a - h.device_lo >= h.device_span && a - h.tg_lo >= h.tg_span) return;
  h.detector->access(a, size, kind, reinterpret_cast<uintptr_t>(pc));
}

// Ranges may start below a window and reach into it.
[[gnu::always_inline]] inline void on_range(const volatile void* p, size_t size, uint8_t kind, void* pc) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  const RaceHooks& h = race_hooks;
  const bool device = a < h.device_lo + h.device_span && a + size > h.device_lo;
  const bool tg = a < h.tg_lo + h.tg_span && a + size > h.tg_lo;
  if (device || tg) h.detector->access(a, size, kind, reinterpret_cast<uintptr_t>(pc));
}

// The memory orders passed in are ignored: sequential consistency is at least as strong.
constexpr int kSeqCst = __ATOMIC_SEQ_CST;

template <class T>
T atomic_load(const volatile T* a, void* pc) {
  on_access(a, sizeof(T), kRead | kAtomic, pc);
  return __atomic_load_n(a, kSeqCst);
}
template <class T>
void atomic_store(volatile T* a, T v, void* pc) {
  on_access(a, sizeof(T), kWrite | kAtomic, pc);
  __atomic_store_n(a, v, kSeqCst);
}
template <class T>
bool atomic_cas(volatile T* a, T* expected, T desired, void* pc) {
  const bool ok = __atomic_compare_exchange_n(a, expected, desired, false, kSeqCst, kSeqCst);
  on_access(a, sizeof(T), uint8_t(ok ? kWrite | kAtomic : kRead | kAtomic), pc);  // a failed CAS only reads
  return ok;
}

}  // namespace
}  // namespace mtlsim::detail

using mtlsim::detail::kAtomic;
using mtlsim::detail::kRead;
using mtlsim::detail::kWrite;
using mtlsim::detail::on_access;
using mtlsim::detail::on_range;

#define MTLSIM_TSAN extern "C" __attribute__((visibility("default"), used))
#define MTLSIM_PC __builtin_return_address(0)

MTLSIM_TSAN void __tsan_init() {}
MTLSIM_TSAN void __tsan_func_entry(void* call_site) {
  if (mtlsim::detail::race_hooks.detector) mtlsim::detail::race_hooks.detector->enter(reinterpret_cast<uintptr_t>(call_site));
}
MTLSIM_TSAN void __tsan_func_exit() {
  if (mtlsim::detail::race_hooks.detector) mtlsim::detail::race_hooks.detector->leave();
}
MTLSIM_TSAN void __tsan_vptr_update(void**, void*) {}
MTLSIM_TSAN void __tsan_vptr_read(void**) {}

#define MTLSIM_TSAN_ACCESS(n)                                                                                \
  MTLSIM_TSAN void __tsan_read##n(void* p) { on_access(p, n, kRead, MTLSIM_PC); }                           \
  MTLSIM_TSAN void __tsan_write##n(void* p) { on_access(p, n, kWrite, MTLSIM_PC); }                         \
  MTLSIM_TSAN void __tsan_volatile_read##n(void* p) { on_access(p, n, kRead, MTLSIM_PC); }                  \
  MTLSIM_TSAN void __tsan_volatile_write##n(void* p) { on_access(p, n, kWrite, MTLSIM_PC); }
#define MTLSIM_TSAN_UNALIGNED(n)                                                                             \
  MTLSIM_TSAN void __tsan_unaligned_read##n(const void* p) { on_range(p, n, kRead, MTLSIM_PC); }            \
  MTLSIM_TSAN void __tsan_unaligned_write##n(void* p) { on_range(p, n, kWrite, MTLSIM_PC); }
MTLSIM_TSAN_ACCESS(1)
MTLSIM_TSAN_ACCESS(2)
MTLSIM_TSAN_ACCESS(4)
MTLSIM_TSAN_ACCESS(8)
MTLSIM_TSAN_ACCESS(16)
MTLSIM_TSAN_UNALIGNED(2)
MTLSIM_TSAN_UNALIGNED(4)
MTLSIM_TSAN_UNALIGNED(8)
MTLSIM_TSAN_UNALIGNED(16)

MTLSIM_TSAN void __tsan_read_range(void* p, size_t size) { on_range(p, size, kRead, MTLSIM_PC); }
MTLSIM_TSAN void __tsan_write_range(void* p, size_t size) { on_range(p, size, kWrite, MTLSIM_PC); }

// Memory orders (the int arguments) are ignored: every operation is sequentially consistent.
#define MTLSIM_TSAN_RMW(bits, T, op, builtin)                                                              \
  MTLSIM_TSAN T __tsan_atomic##bits##_##op(volatile T* a, T v, int) {                                       \
    on_access(a, sizeof(T), kWrite | kAtomic, MTLSIM_PC);                                                   \
    return builtin(a, v, __ATOMIC_SEQ_CST);                                                                 \
  }
#define MTLSIM_TSAN_ATOMICS(bits, T)                                                                         \
  MTLSIM_TSAN T __tsan_atomic##bits##_load(const volatile T* a, int) {                                      \
    return mtlsim::detail::atomic_load(a, MTLSIM_PC);                                                       \
  }                                                                                                          \
  MTLSIM_TSAN void __tsan_atomic##bits##_store(volatile T* a, T v, int) {                                   \
    mtlsim::detail::atomic_store(a, v, MTLSIM_PC);                                                          \
  }                                                                                                          \
  MTLSIM_TSAN_RMW(bits, T, exchange, __atomic_exchange_n)                                                    \
  MTLSIM_TSAN_RMW(bits, T, fetch_add, __atomic_fetch_add)                                                    \
  MTLSIM_TSAN_RMW(bits, T, fetch_sub, __atomic_fetch_sub)                                                    \
  MTLSIM_TSAN_RMW(bits, T, fetch_and, __atomic_fetch_and)                                                    \
  MTLSIM_TSAN_RMW(bits, T, fetch_or, __atomic_fetch_or)                                                      \
  MTLSIM_TSAN_RMW(bits, T, fetch_xor, __atomic_fetch_xor)                                                    \
  MTLSIM_TSAN_RMW(bits, T, fetch_nand, __atomic_fetch_nand)                                                  \
  MTLSIM_TSAN int __tsan_atomic##bits##_compare_exchange_strong(volatile T* a, T* c, T v, int, int) {       \
    return mtlsim::detail::atomic_cas(a, c, v, MTLSIM_PC);                                                  \
  }                                                                                                          \
  MTLSIM_TSAN int __tsan_atomic##bits##_compare_exchange_weak(volatile T* a, T* c, T v, int, int) {         \
    return mtlsim::detail::atomic_cas(a, c, v, MTLSIM_PC);                                                  \
  }                                                                                                          \
  MTLSIM_TSAN T __tsan_atomic##bits##_compare_exchange_val(volatile T* a, T c, T v, int, int) {             \
    mtlsim::detail::atomic_cas(a, &c, v, MTLSIM_PC);                                                        \
    return c;                                                                                                \
  }
MTLSIM_TSAN_ATOMICS(8, uint8_t)
MTLSIM_TSAN_ATOMICS(16, uint16_t)
MTLSIM_TSAN_ATOMICS(32, uint32_t)
MTLSIM_TSAN_ATOMICS(64, uint64_t)

MTLSIM_TSAN void __tsan_atomic_thread_fence(int) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
MTLSIM_TSAN void __tsan_atomic_signal_fence(int) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }

#endif  // !MTLSIM_UNDER_TSAN
