#pragma once
// Counting through the simulator: a CountFn (advisor.h) that builds each kernel's access-counted
// module (verify::SimModule, cached like verify's) and runs the case in verify's sandboxed child.
#include <vector>

#include "advisor/advisor.h"
#include "verify/sim_module.h"

namespace mtlgen::advisor {

// `options.access_counted` is set here. The modules of `kernels` (kernel families excepted) are
// built first, `jobs` compiles at once (0: one per core); a module that fails to build is built
// again, and its error thrown, when its kernel is counted. The CountFn throws what verify throws
// (a compile error, a failing case).
CountFn simulator_counter(verify::ModuleOptions options, double timeout_seconds, const std::vector<ir::Kernel>& kernels,
                          int jobs = 0);

}  // namespace mtlgen::advisor
