#pragma once
// Counting through the simulator: a CountFn (advisor.h) that builds each kernel's access-counted
// module (verify::SimModule, cached like verify's) and runs the case in verify's sandboxed child.
#include "advisor/advisor.h"
#include "verify/sim_module.h"

namespace mtlgen::advisor {

// `options.access_counted` is set here. Throws what verify throws (a compile error, a failing case).
CountFn simulator_counter(verify::ModuleOptions options, double timeout_seconds);

}  // namespace mtlgen::advisor
