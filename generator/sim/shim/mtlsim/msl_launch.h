// Helpers for per-kernel launchers (KernelThreadFn): convert the runtime's builtins to the
// type a kernel parameter declares, e.g.
//   k(..., mtlsim::as_builtin<uint3>(tc.thread_position_in_grid),
//          mtlsim::as_builtin<ushort>(tc.thread_index_in_simdgroup));
// A scalar position builtin (uint gid [[thread_position_in_grid]]) is the x component.
#pragma once
#pragma GCC system_header

#include "mtlsim/msl_vec.h"
#include "mtlsim/thread_context.h"

namespace mtlsim {

template <class T>
inline T as_builtin(const Dim3& d) {
  if constexpr (metal::is_vec_v<T>) {
    using E = typename T::value_type;
    const E xyz[3] = {E(d.x), E(d.y), E(d.z)};
    T r;
    for (int i = 0; i < int(sizeof(T) / sizeof(E)) && i < 3; ++i) r[i] = xyz[i];
    return r;
  } else {
    return T(d.x);
  }
}
template <class T>
inline T as_builtin(uint32_t v) {
  return T(v);
}

// ---- is_function_constant_defined ----
// In the simulator a function constant (`constant T c [[function_constant(i)]];`) is a file-scope
// variable of the module, which the launcher sets before each dispatch. It counts as defined
// unless the launcher marks it undefined for the run -- what a test run that gives it no value
// does: set_function_constant_defined(&c, false) before the dispatch, clear_function_constant_marks()
// after. Marks are read when the kernel calls is_function_constant_defined, so a program-scope
// `constant bool has_c = is_function_constant_defined(c);` (initialised once, at module load)
// always sees the constant as defined.
namespace detail {
inline constexpr int kMaxUndefinedConstants = 64;
inline const void* undefined_constants[kMaxUndefinedConstants];
inline int undefined_constant_count = 0;
}  // namespace detail

inline bool function_constant_defined(const void* address) {
  for (int i = 0; i < detail::undefined_constant_count; ++i)
    if (detail::undefined_constants[i] == address) return false;
  return true;
}

// Returns false when more than kMaxUndefinedConstants are marked.
inline bool set_function_constant_defined(const void* address, bool defined) {
  int& n = detail::undefined_constant_count;
  for (int i = 0; i < n; ++i) {
    if (detail::undefined_constants[i] != address) continue;
    if (defined) detail::undefined_constants[i] = detail::undefined_constants[--n];
    return true;
  }
  if (defined) return true;
  if (n == detail::kMaxUndefinedConstants) return false;
  detail::undefined_constants[n++] = address;
  return true;
}

inline void clear_function_constant_marks() { detail::undefined_constant_count = 0; }

}  // namespace mtlsim

template <class T>
inline bool is_function_constant_defined(const T& function_constant) {
  return mtlsim::function_constant_defined(&function_constant);
}
namespace metal {
using ::is_function_constant_defined;
}
