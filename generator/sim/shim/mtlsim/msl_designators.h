// What the simulator's copy of a file calls in place of a GNU array range designator, which g++
// does not accept in C++: `float s[N] = { [0 ... N-1] = 0.0f };` becomes
//   float s[N] = {}; ::mtlsim::set_range(s, 0, N-1, 0.0f);
// on the same line (generator/msl/msl_range_designators.cpp).
#pragma once
#pragma GCC system_header

#include <cstddef>

namespace mtlsim {

// Elements first..last (inclusive, as the designator writes them) of `array` take `value`.
template <class T, std::size_t N, class First, class Last, class V>
inline void set_range(T (&array)[N], First first, Last last, const V& value) {
  for (long long i = first; i <= static_cast<long long>(last); ++i) array[i] = value;
}

}  // namespace mtlsim
