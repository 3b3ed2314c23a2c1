#pragma once
// The spec front end: a spec file in, a validated ir::Kernel out (or located diagnostics).
#include <optional>
#include <string>
#include <vector>

#include "ir/kernel.h"
#include "spec/yaml_reader.h"

namespace mtlgen::spec {

// `display_path` is how the spec is named in diagnostics and generated headers. `include_dirs`
// (the command line's -I) are searched by a `source:` kernel after the spec's `include_dirs:`.
// A family's borrowed kernels (`name: {spec: file.yaml}`) are loaded from their specs here, each
// spec once, so the family holds them as their own specs define them.
std::optional<ir::Kernel> load_spec(const std::string& path, const std::string& display_path,
                                    support::Diagnostics& diags, const YamlLimits& limits = {},
                                    const std::vector<std::string>& include_dirs = {});

}  // namespace mtlgen::spec
