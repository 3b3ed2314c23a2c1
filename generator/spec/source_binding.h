#pragma once
// Hand-written kernels (`source: file.metal`): the spec names the file's parameters only to give
// shapes, test inputs, dispatch and the reference; everything the source says itself (types,
// access, buffer indices, argument-struct layouts, function constants) is read from it by the
// MSL front end and never restated.
#include <optional>
#include <string>

#include "ir/kernel.h"
#include "msl/msl_unit.h"
#include "support/diagnostics.h"

namespace mtlgen::spec {

// Before validation: parses the source (errors at the user's .metal lines), checks that every
// entry exists, and completes the buffers (element type, access, index) and function constants
// from it. Returns the parsed unit for bind_source_variants, or nothing when the file is unusable.
std::optional<msl::Unit> read_source(ir::Kernel& kernel, const std::string& spec_path, support::Diagnostics& diags);

// After the variants are built: keeps the variants the entries name, and binds each one's
// parameters to buffers, threadgroup arrays, builtins and argument bytes.
void bind_source_variants(ir::Kernel& kernel, const msl::Unit& unit, support::Diagnostics& diags);

// What a `constant` value of this C type holds, for argument slots: `int64_t` is an integer,
// `half` a float, a struct none.
enum class ValueKind { integer, floating, boolean, none };
ValueKind c_value_kind(const std::string& c_type);

// `float` -> f32, `half` -> f16, `uchar`/`uint8_t` -> u8, `float4` -> f32, a struct -> bytes.
ir::ScalarType element_scalar_type(const std::string& c_type);

}  // namespace mtlgen::spec
