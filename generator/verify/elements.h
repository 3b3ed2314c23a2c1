#pragma once
// Reading and writing buffer elements of any spec element type as double, and the bit patterns
// that mark output elements no thread wrote.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ir/types.h"

namespace mtlgen::verify {

double load_element(ir::ScalarType type, const void* base, size_t index);
void store_element(ir::ScalarType type, void* base, size_t index, double value);

// Output poison for run `which` (0 or 1): a NaN with a distinctive payload for float types, a
// byte pattern for integers. Two different patterns tell "never written" from "wrote that value".
std::vector<uint8_t> output_poison(ir::ScalarType type, int which);

bool equals_pattern(const void* element, const std::vector<uint8_t>& pattern);

}  // namespace mtlgen::verify
