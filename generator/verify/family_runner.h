#pragma once
// One verification case of a kernel family: its dispatches run in order over the family's
// buffers, under the same lane orders and poisons as a single kernel's case, and the family's
// outputs are checked against the family's one reference.
#include <memory>
#include <vector>

#include "verify/case_runner.h"

namespace mtlgen::verify {

// `family` holds the family's reference; `members[i]` the simulator module of Family::kernels[i].
// Runs spec code: only in the sandboxed child.
CaseResult run_family_case(const CaseRequest& request, const LoadedModule& family,
                           const std::vector<std::unique_ptr<LoadedModule>>& members);

}  // namespace mtlgen::verify
