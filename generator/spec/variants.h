#pragma once
// The variants of a validated kernel: its type combinations x tune points, each with its entry
// point, threadgroup shape and threadgroup memory, checked against Metal's limits. The validator
// runs this once the declarations are sound (spec_validator.h).
#include "ir/kernel.h"
#include "support/diagnostics.h"

namespace mtlgen::spec {

// Fills kernel.variants and kernel.msl_version; reports a variant that breaks a limit (and leaves
// it out) or a tune space above kMaxVariants.
void build_variants(ir::Kernel& kernel, support::Diagnostics& diags);

}  // namespace mtlgen::spec
