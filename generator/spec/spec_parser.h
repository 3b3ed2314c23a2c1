#pragma once
// YAML -> ir::Kernel, field by field, with every syntactic problem reported at its node
// (the `tests:` section in tests_parser.h).
// Semantic checks and derived data (variants, bindings, helpers) are spec_validator's job.
#include <yaml-cpp/yaml.h>

#include "ir/kernel.h"
#include "spec/yaml_reader.h"

namespace mtlgen::spec {

// Fills every field the spec states. Returns false when any error was reported.
bool parse_kernel(const YamlContext& ctx, const YAML::Node& root, ir::Kernel& kernel);

// Top-level keys of a spec, in documentation order (also used for did-you-mean).
const std::vector<std::string>& top_level_keys();

}  // namespace mtlgen::spec
