#pragma once
// Deterministic test inputs from a spec's distributions: same seed, same bytes, on every run.
#include <cstddef>
#include <cstdint>
#include <string>

#include "ir/kernel.h"

namespace mtlgen::verify {

// Fills `elements` values of `type` at `data`. Throws std::invalid_argument for a `set:` index
// past the end of the buffer.
void fill_input(const ir::InputFill& fill, ir::ScalarType type, void* data, size_t elements, uint64_t seed);

// The seed of one buffer in one case: the case's (or plan's) seed mixed with the buffer's name.
uint64_t buffer_seed(uint64_t case_seed, const std::string& buffer);

}  // namespace mtlgen::verify
