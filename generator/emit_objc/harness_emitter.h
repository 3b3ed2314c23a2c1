#pragma once
// The harness backend: per kernel, <kernel>/<kernel>_harness.h (the kernel as the shared timing
// and autotune programs see it: cases, buffers, inputs, glue, reference, tolerances) and the
// programs bench_<kernel>.mm and autotune_<kernel>.mm; once per library, support/mtlgen_harness.{h,mm}
// (the programs themselves) and CMakeLists.txt (metallib, glue, references and programs on macOS).
#include <vector>

#include "ir/kernel.h"
#include "support/output_set.h"

namespace mtlgen::emit {

void emit_harness(const ir::Kernel& kernel, support::OutputSet& out);
void emit_harness_support(const std::vector<ir::Kernel>& kernels, support::OutputSet& out);

}  // namespace mtlgen::emit
