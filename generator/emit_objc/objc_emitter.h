#pragma once
// The Objective-C++ backend. Per kernel:
//  - <kernel>/MTG<Camel>.h, .mm: a class over an id<MTLLibrary> that creates each variant's
//    pipeline on first use (or prewarm) and encodes typed, checked dispatches into a compute
//    command encoder;
//  - <kernel>/<kernel>.h: a plain C++ facade over that class (Metal objects as void*),
//    implemented in the same .mm.
// Once per library, under support/: mtlgen_objc.h (error domain, inline checks on the encode path),
// mtlgen_runtime.{h,mm} (loading, the lazy pipeline cache, buffer checks and helpers, command
// buffers, tuning files), mtlgen_capture.mm and mtlgen_metal.h (frame capture, tuning table,
// facade types), and MTGKernelLibrary.{h,mm} (every kernel of the library in one object; nothing
// is compiled at load).
// Sizes, checks and entry points come from <kernel>_types.h; buffer indices from the binding table.
#include <vector>

#include "ir/kernel.h"
#include "support/output_set.h"

namespace mtlgen::emit {

void emit_objc(const ir::Kernel& kernel, support::OutputSet& out);
void emit_objc_support(const std::vector<ir::Kernel>& kernels, support::OutputSet& out);

// MTG<Camel>: the Objective-C class of a kernel.
std::string objc_class_name(const ir::Kernel& kernel);

}  // namespace mtlgen::emit
