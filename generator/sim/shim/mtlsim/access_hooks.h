// The entry points g++'s kernel-address instrumentation calls before each load and store, in a
// TU compiled for access counting (mtlsim/access_counter.h says how): each passes the access on
// to the runtime's counter. Force-included, so every instrumented TU defines them itself and no
// sanitizer runtime is linked. Each passes its return address too: the instruction of the kernel
// that made the access (the access site whose coalescing the counter measures).
#pragma once
#pragma GCC system_header

#include <cstddef>
#include <cstdint>

extern "C" void mtlsim_count_access(uintptr_t address, size_t size, bool store, uintptr_t pc);
#define MTLSIM_ACCESS_PC reinterpret_cast<uintptr_t>(__builtin_return_address(0))

#define MTLSIM_ACCESS_HOOK extern "C" inline __attribute__((used, visibility("hidden"), no_sanitize_address))
#define MTLSIM_ACCESS_HOOKS(n)                                                                   \
  MTLSIM_ACCESS_HOOK void __asan_load##n##_noabort(uintptr_t a) { mtlsim_count_access(a, n, false, MTLSIM_ACCESS_PC); } \
  MTLSIM_ACCESS_HOOK void __asan_store##n##_noabort(uintptr_t a) { mtlsim_count_access(a, n, true, MTLSIM_ACCESS_PC); }
MTLSIM_ACCESS_HOOKS(1)
MTLSIM_ACCESS_HOOKS(2)
MTLSIM_ACCESS_HOOKS(4)
MTLSIM_ACCESS_HOOKS(8)
MTLSIM_ACCESS_HOOKS(16)
#undef MTLSIM_ACCESS_HOOKS
// Sizes without a hook of their own (unaligned or odd-sized accesses).
MTLSIM_ACCESS_HOOK void __asan_loadN_noabort(uintptr_t a, size_t n) { mtlsim_count_access(a, n, false, MTLSIM_ACCESS_PC); }
MTLSIM_ACCESS_HOOK void __asan_storeN_noabort(uintptr_t a, size_t n) { mtlsim_count_access(a, n, true, MTLSIM_ACCESS_PC); }
// Called before a noreturn call (a throw, longjmp); nothing to unpoison without shadow memory.
MTLSIM_ACCESS_HOOK void __asan_handle_no_return() {}
#undef MTLSIM_ACCESS_HOOK
#undef MTLSIM_ACCESS_PC
