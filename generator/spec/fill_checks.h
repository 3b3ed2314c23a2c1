#pragma once
// The fills of a kernel's input buffers (`tests.inputs` and each case's `inputs:`, the unwritten
// default included) against the element types they fill: an integer buffer gets only values its
// type holds, a float buffer no `bits`.
#include "ir/kernel.h"
#include "support/diagnostics.h"

namespace mtlgen::spec {

void check_fills(const ir::Kernel& kernel, support::Diagnostics& diags);

}  // namespace mtlgen::spec
