#include "check_msl/checked_library.h"

#include <cstdlib>

#include "spec/library.h"
#include "support/tool_identity.h"

namespace mtlgen::check_msl {

std::vector<ir::Kernel> load_library(const std::vector<std::string>& inputs, support::Diagnostics& diags,
                                     const std::vector<std::string>& include_dirs, const PassedChecks& passed) {
  return kernels_that_compile(spec::load_library(spec::collect_spec_files(inputs, diags), diags, include_dirs), diags,
                              passed);
}

PassedChecks passed_checks_from_environment() {
  const char* dir = std::getenv("MTLGEN_CACHE_DIR");
  if (dir == nullptr || *dir == '\0') return {};
  return {dir, support::sources_identity()};
}

}  // namespace mtlgen::check_msl
