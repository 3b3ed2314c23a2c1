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

}  // namespace mtlsim
