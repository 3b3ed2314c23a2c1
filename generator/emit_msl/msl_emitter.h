#pragma once
// The MSL backend: one self-contained <kernel>/<kernel>.metal per spec, in MLX's style — a
// file-scope SIMD_SIZE, a kernel template over type parameters and tunables, helpers only when the
// body calls them, and one one-line `template [[host_name("...")]] ... decltype(...)`
// instantiation per variant.
//
// Why helpers are pasted rather than included from a header shipped beside the kernels: a single
// .metal must compile on its own wherever it goes — `xcrun metal -c` per file in the package, a
// user's project or newLibraryWithSource:, the simulator's module — with no include path to set.
//
// Why templates rather than function constants for variants: every variant is compiled ahead of
// time into the metallib, carries its own max_total_threads_per_threadgroup, and creating its
// pipeline needs no specialisation compile at run time. Spec-level function constants remain
// available for flags the host decides at pipeline creation.
#include "emit_common/emitter.h"
#include "ir/kernel.h"
#include "support/output_set.h"

namespace mtlgen::emit {

std::string msl_source(const ir::Kernel& kernel);
void emit_msl(const ir::Kernel& kernel, support::OutputSet& out);

// The spec blocks in the emitted .metal: prelude, metal_prelude (file scope), body, each with the
// line it starts on. The .metal carries no markers: these lines are computed as it is written.
std::vector<EmbeddedBlock> msl_blocks(const ir::Kernel& kernel);

}  // namespace mtlgen::emit
