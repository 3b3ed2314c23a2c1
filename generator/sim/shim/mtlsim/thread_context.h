// Builtins of one simulated GPU thread. Shared by the runtime (which fills them) and the
// per-kernel launchers (which pass them to the kernel's [[thread_position_in_grid]] etc.).
#pragma once

#include <cstdint>

namespace mtlsim {

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  constexpr uint64_t volume() const { return uint64_t(x) * y * z; }
  friend constexpr bool operator==(const Dim3&, const Dim3&) = default;
};

inline constexpr uint32_t kSimdWidth = 32;

struct ThreadContext {
  Dim3 thread_position_in_grid, thread_position_in_threadgroup, threadgroup_position_in_grid,
      threads_per_threadgroup, threadgroups_per_grid, threads_per_grid;
  uint32_t thread_index_in_threadgroup = 0, thread_index_in_simdgroup = 0,
           simdgroup_index_in_threadgroup = 0, simdgroups_per_threadgroup = 1,
           threads_per_simdgroup = kSimdWidth;
  // One pointer per DispatchOptions::threadgroup_arrays entry: this threadgroup's copy.
  void* const* threadgroup_memory = nullptr;
};

// The builtins of the simulated thread running on this OS thread; null outside a dispatch.
// Meant for crash handlers and diagnostics (it is async-signal-safe: a TLS read).
const ThreadContext* current_thread_context() noexcept;

}  // namespace mtlsim
