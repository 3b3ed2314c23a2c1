#pragma once
// Deterministic test inputs from a spec's distributions: same seed, same bytes, on every run.
#include <cstddef>
#include <cstdint>
#include <string>

#include "ir/kernel.h"

namespace mtlgen::verify {

// Fills `elements` values of `type` at `data`; a buffer of `block`s field by field (each field's
// `set:` indices count that field's elements across the blocks). Throws std::invalid_argument for
// a `set:` index past the end, or bytes that are not a whole number of blocks.
void fill_input(const ir::InputFill& fill, ir::ScalarType type, void* data, size_t elements, uint64_t seed,
                const ir::BlockLayout* block = nullptr);

// The seed of one buffer in one case: the case's (or plan's) seed mixed with the buffer's name.
uint64_t buffer_seed(uint64_t case_seed, const std::string& buffer);

}  // namespace mtlgen::verify
