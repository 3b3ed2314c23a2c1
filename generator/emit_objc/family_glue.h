#pragma once
// The Objective-C++ glue of a kernel family (ir::Kernel::family): <family>/MTG<Camel>.{h,mm}, a
// class holding one object per kernel of the family whose encode call checks every dispatch, then
// records them in order into the caller's encoder with the barriers a concurrent encoder needs;
// and <family>/<family>.h, its plain C++ facade. The kernels' own classes are emitted as usual.
#include <string>
#include <vector>

#include "ir/kernel.h"
#include "support/output_set.h"
#include "support/templates.h"

namespace mtlgen::emit {

void emit_family_objc(const ir::Kernel& family, support::OutputSet& out);

// One family buffer that dispatch `dispatch` must see ordered after an earlier dispatch's access.
struct BarrierBuffer {
  std::string buffer;   // the family's name
  size_t after = 0;     // the earlier dispatch
  bool after_wrote = true;  // it wrote the buffer (else it read it and `dispatch` writes it)
  ir::Access access = ir::Access::read;  // how `dispatch` uses it
};

// Per dispatch, the family buffers a memory barrier before it must name (empty for the first
// dispatch and for one that shares nothing written with the dispatches since the last barrier on
// each buffer): read-after-write, write-after-read and write-after-write hazards.
std::vector<std::vector<BarrierBuffer>> family_barriers(const ir::Family& family);

// MTGKernelLibrary's data for a family: the properties of its kernels, in kernel order.
support::TemplateData family_library_item(const ir::Kernel& family);

}  // namespace mtlgen::emit
