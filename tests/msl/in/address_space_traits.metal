#include <metal_stdlib>
#include "address_space_traits.h"
using namespace metal;

template <typename P>
void store_one(P dst) {
  *dst = traits::element_of_t<P>(1);
}

kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  store_one(out + i);
}
