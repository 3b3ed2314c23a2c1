#pragma once
// Deterministic test inputs from a spec's distributions: an adapter from the IR to the generator
// shared with the Mac harness and the reference tests (templates/support/mtlgen_testdata.h), so the
// same spec, case and seed give the same bytes on every platform.
#include <cstddef>
#include <cstdint>
#include <string>

#include "ir/kernel.h"

namespace mtlgen {
enum class DType : uint8_t;  // mtlgen_host.h
}

namespace mtlgen::verify {

// Fills `elements` values of `type` at `data`; a buffer of `block`s field by field (each field's
// `set:` indices count that field's elements across the blocks). Throws std::invalid_argument for
// a `set:` index past the end, or bytes that are not a whole number of blocks.
void fill_input(const ir::InputFill& fill, ir::ScalarType type, void* data, size_t elements, uint64_t seed,
                const ir::BlockLayout* block = nullptr);

// The seed of one buffer in one case: the case's (or plan's) seed mixed with the buffer's name.
uint64_t buffer_seed(uint64_t case_seed, const std::string& buffer);

// The shared generator's element type for a spec element type (`bytes` and `bool` are bytes).
DType dtype_of(ir::ScalarType type);

}  // namespace mtlgen::verify
