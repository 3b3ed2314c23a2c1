#pragma once
// Threadgroup arrays and variables a spec body declares, MLX's way:
//   threadgroup float partials[TG / SIMD_SIZE];
//   threadgroup float tile[TG_Y][TG_X + 1];
// They are read from the body's text into ir::Kernel::body_threadgroup_variables, so that each
// variant's threadgroup memory (the `threadgroup_memory:` arrays plus these) is known and checked
// against Metal's 32 KiB before anything is emitted.
#include <cstdint>

#include "ir/kernel.h"
#include "support/diagnostics.h"

namespace mtlgen::spec {

// The emitted kernel's SIMD_SIZE (templates/msl/kernel.metal.mustache), which extents may use.
inline constexpr int64_t kSimdSize = 32;

// Fills kernel.body_threadgroup_variables. An extent that is not constant per variant (a dim, a
// scalar, a local) or an element type it cannot size is a located `body-declaration` error.
void read_body_threadgroup_variables(ir::Kernel& kernel, support::Diagnostics& diags);

}  // namespace mtlgen::spec
