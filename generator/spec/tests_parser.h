#pragma once
// The `tests:` section of a spec: seed, tolerances, input fills, function-constant values and the
// test cases, into kernel.tests (spec_parser.cpp reads the rest of the spec).
#include <yaml-cpp/yaml.h>

#include "ir/kernel.h"
#include "spec/yaml_reader.h"

namespace mtlgen::spec {

void parse_tests(const YamlContext& ctx, const YAML::Node& tests, ir::Kernel& kernel);

}  // namespace mtlgen::spec
