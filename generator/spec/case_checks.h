#pragma once
// A test case's dims against every variant of its kernel: some variant runs it, every size it
// implies is computable in 64 bits, and a family's dispatches get dims their kernels accept. The
// validator calls this once the case's own dims passed their constraints (spec_validator.h).
#include <map>
#include <string>

#include "ir/kernel.h"
#include "support/diagnostics.h"

namespace mtlgen::spec {

void check_case_at_variants(const ir::Kernel& kernel, const ir::TestCase& c, const std::map<std::string, int64_t>& dims,
                            support::Diagnostics& diags);

}  // namespace mtlgen::spec
