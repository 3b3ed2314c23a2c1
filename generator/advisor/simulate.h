#pragma once
// Counting through the simulator: a CountFn (advisor.h) that builds each kernel's access-counted
// module (verify::SimModule, cached like verify's) and runs the case in verify's sandboxed child.
#include <vector>

#include "advisor/advisor.h"
#include "verify/sim_module.h"

namespace mtlgen::advisor {

// `options.access_counted` is set here. Each kernel's module holds only the variant counted
// (counted_variant), built first for `kernels` (kernel families excepted), `jobs` compiles at once
// (0: one per core); a module that fails to build, or of another variant, is built when counted.
// The CountFn throws what verify throws (a compile error, a failing case).
CountFn simulator_counter(verify::ModuleOptions options, double timeout_seconds, const std::vector<ir::Kernel>& kernels,
                          int jobs = 0);

}  // namespace mtlgen::advisor
