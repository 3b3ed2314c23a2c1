#pragma once
// The spec front end: a spec file in, a validated ir::Kernel out (or located diagnostics).
#include <optional>
#include <string>

#include "ir/kernel.h"
#include "spec/yaml_reader.h"

namespace mtlgen::spec {

// `display_path` is how the spec is named in diagnostics and generated headers.
std::optional<ir::Kernel> load_spec(const std::string& path, const std::string& display_path,
                                    support::Diagnostics& diags, const YamlLimits& limits = {});

}  // namespace mtlgen::spec
