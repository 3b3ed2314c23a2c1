// `threadgroup` variables declared inside function bodies. The MSL front end rewrites
//   threadgroup float sums[32];
// into
//   auto& sums = ::mtlsim::threadgroup_local<float[32]>([]{}, "sums");
// The lambda is never called: its closure type is unique to the declaration (and to each
// instantiation of an enclosing template), so every site gets its own function-local static
// below, built once, and every thread of a threadgroup that executes the declaration gets that
// threadgroup's storage for the site. See "Threadgroup memory" in mtlsim/runtime.h.
#pragma once
#pragma GCC system_header

#include <type_traits>

#include "mtlsim/exec.h"
#include "mtlsim/msl_simd.h"

namespace mtlsim {

namespace detail {

template <class E>
constexpr PoisonKind poison_kind_of() {
  if constexpr (std::is_same_v<E, _Float16>) return PoisonKind::f16;
  else if constexpr (std::is_same_v<E, metal::bfloat>) return PoisonKind::bf16;
  else return PoisonKind::f32;  // float, integers and structs alike, as for threadgroup arrays
}

template <class T>
ThreadgroupVariableSite make_threadgroup_variable_site(const char* name, int line) {
  // float4 tile[8][8] -> float: poison and race granule follow the innermost scalar, so threads
  // writing different components of one vector do not race.
  using E = typename elem_of<std::remove_cv_t<std::remove_all_extents_t<T>>>::type;
  static_assert(alignof(T) <= 4096, "threadgroup variable over-aligned");
  return {name,
          uint32_t(sizeof(T)),
          uint32_t(alignof(T) < 16 ? 16 : alignof(T)),
          uint32_t(alignof(E)),
          line,
          poison_kind_of<E>(),
          new_threadgroup_variable_id()};
}

}  // namespace detail

// `line` defaults to the declaration's line (the front end keeps lines), for the 32 KiB report.
template <class T, class Site>
inline T& threadgroup_local(Site, const char* name, int line = __builtin_LINE()) {
  static const detail::ThreadgroupVariableSite site = detail::make_threadgroup_variable_site<T>(name, line);
  return *static_cast<T*>(detail::threadgroup_variable(site));
}

}  // namespace mtlsim
