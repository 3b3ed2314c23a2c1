// A trait specialized once per address space, in a header (MslAccept.TraitSpecializedPerAddressSpace).
#pragma once
#include <metal_stdlib>

namespace traits {
template <typename T>
struct element_of {};

template <typename T>
struct element_of<thread T*> {
  using type = metal::remove_cv_t<T>;
};
template <typename T>
struct element_of<device T*> {
  using type = metal::remove_cv_t<T>;
};
template <typename T>
struct element_of<constant T*> {
  using type = metal::remove_cv_t<T>;
};
template <typename T>
struct element_of<threadgroup T*> {
  using type = metal::remove_cv_t<T>;
};

template <typename P>
using element_of_t = typename element_of<metal::remove_cv_t<P>>::type;
}  // namespace traits
