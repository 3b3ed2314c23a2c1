#pragma once
// `TODO` placeholders: `mtlgen import` writes spec skeletons whose unknown values are strings
// beginning with `TODO`. Before a spec is parsed, each one left is reported at its own line, and
// nothing else: the list `check` prints is exactly what remains to fill in.
#include <yaml-cpp/yaml.h>

#include "spec/yaml_reader.h"

namespace mtlgen::spec {

// Reports every scalar value that begins with `TODO`; returns how many there were.
int report_placeholders(const YamlContext& ctx, const YAML::Node& root);

}  // namespace mtlgen::spec
