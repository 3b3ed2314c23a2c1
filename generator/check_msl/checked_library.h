#pragma once
// The library as every subcommand loads it: the spec files its inputs name, loaded and validated
// by the front end (spec::load_library), less the kernels whose emitted MSL or reference does not
// compile (kernels_that_compile). It lives here, not in spec/, because that last check runs the
// emitters, which come after the front end.
#include <string>
#include <vector>

#include "check_msl/check_msl.h"
#include "ir/kernel.h"
#include "support/diagnostics.h"

namespace mtlgen::check_msl {

// libclang is nine tenths of loading a library; where the user gave a cache ($MTLGEN_CACHE_DIR),
// code that passed it before is not parsed again. Without one nothing is written.
PassedChecks passed_checks_from_environment();

// `include_dirs` (-I) are searched by every `source:` kernel after its spec's `include_dirs:`;
// `passed` says where libclang's verdicts are kept (verify keeps them in its own cache).
std::vector<ir::Kernel> load_library(const std::vector<std::string>& inputs, support::Diagnostics& diags,
                                     const std::vector<std::string>& include_dirs = {},
                                     const PassedChecks& passed = passed_checks_from_environment());

}  // namespace mtlgen::check_msl
