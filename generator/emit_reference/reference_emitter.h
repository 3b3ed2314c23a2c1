#pragma once
// The C++ backends:
//  - <kernel>/<kernel>_types.h: the host-side description every consumer shares (dims, scalars,
//    tuning, parameter struct, constraints, dispatch, entry points, cost);
//  - <kernel>/<kernel>_reference.{h,cpp}: the serial reference, templated like the kernel;
//  - support/mtlgen_host.h and support/mtlgen_numeric.h, copied once per library.
#include <vector>

#include "emit_common/emitter.h"
#include "ir/kernel.h"
#include "support/output_set.h"

namespace mtlgen::emit {

// Where the reference starts in the emitted <kernel>_reference.cpp: the line after
// "// reference: <spec>:<line>" (templates/reference/reference.cpp.mustache).
inline constexpr const char* kReferenceMarker = "// reference: ";
// Where the reference's included file (`reference_include:`) starts: the line after
// "// reference_include: <file>:1", after the reference's own lines.
inline constexpr const char* kReferenceIncludeMarker = "// reference_include: ";

// The spec blocks in the emitted <kernel>_reference.cpp: prelude, reference_prelude,
// reference_include (located in its own file), and last the reference, which the file is built
// around.
std::vector<EmbeddedBlock> reference_blocks(const ir::Kernel& kernel);
// True when the reference reads a tunable: its results are then per variant, not per type.
bool reference_reads_tunables(const ir::Kernel& kernel);

void emit_types(const ir::Kernel& kernel, support::OutputSet& out);
void emit_reference(const ir::Kernel& kernel, support::OutputSet& out);
void emit_host_support(const std::vector<ir::Kernel>& kernels, support::OutputSet& out);

}  // namespace mtlgen::emit
