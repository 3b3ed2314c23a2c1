// specs/schema.json against the parser it describes:
//  - it is a draft 2020-12 schema with a description on every property;
//  - every mapping the parser reads has exactly the parser's keys, and rejects others
//    (the parser's key lists are read back from its own unknown-key hints, so they cannot drift);
//  - the shipped specs and accepts/*.yaml validate, and structurally wrong rejects/*.yaml do not,
//    checked with a small validator for the subset of JSON Schema the file uses.
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <regex>
#include <set>

#include "mini_json_schema.h"
#include "spec/spec_parser.h"
#include "spec_test_util.h"

namespace mtlgen::spec::testing {
namespace {

using nlohmann::json;

json load_schema() {
  std::ifstream in(source_dir() / "specs/schema.json");
  return json::parse(in);
}

const json& schema() {
  static const json s = load_schema();
  return s;
}

std::set<std::string> keys_of(const json& properties) {
  std::set<std::string> out;
  for (auto it = properties.begin(); it != properties.end(); ++it) out.insert(it.key());
  return out;
}

using mtlgen::testing::MiniValidator;

// YAML 1.2 core schema, as editors read it: plain scalars may be null, booleans, integers or floats.
json scalar_to_json(const YAML::Node& n) {
  const std::string& s = n.Scalar();
  if (n.Tag() == "!") return s;  // quoted or block scalar
  static const std::regex null_re("^(|~|null|Null|NULL)$"), true_re("^(true|True|TRUE)$"),
      false_re("^(false|False|FALSE)$"), int_re("^[-+]?[0-9]+$"),
      float_re("^[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?$"),
      inf_re("^[-+]?\\.(inf|Inf|INF)$"), nan_re("^\\.(nan|NaN|NAN)$");
  if (std::regex_match(s, null_re)) return nullptr;
  if (std::regex_match(s, true_re)) return true;
  if (std::regex_match(s, false_re)) return false;
  if (std::regex_match(s, int_re)) {
    try {
      return std::stoll(s);
    } catch (const std::out_of_range&) {
      return std::stod(s);
    }
  }
  if (std::regex_match(s, float_re)) return std::stod(s);
  if (std::regex_match(s, inf_re)) return s[0] == '-' ? -INFINITY : INFINITY;
  if (std::regex_match(s, nan_re)) return NAN;
  return s;
}

json yaml_to_json(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Scalar: return scalar_to_json(n);
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const auto& item : n) out.push_back(yaml_to_json(item));
      return out;
    }
    case YAML::NodeType::Map: {
      json out = json::object();
      for (auto it = n.begin(); it != n.end(); ++it) out[it->first.Scalar()] = yaml_to_json(it->second);
      return out;
    }
    default: return nullptr;
  }
}

std::vector<std::string> schema_errors(const fs::path& yaml) {
  return MiniValidator(schema()).validate(yaml_to_json(YAML::LoadFile(yaml.string())));
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

// ---- the schema file ----

TEST(Schema, IsDraft2020_12) {
  EXPECT_EQ(schema().at("$schema"), "https://json-schema.org/draft/2020-12/schema");
  EXPECT_EQ(schema().at("type"), "object");
  EXPECT_EQ(schema().at("additionalProperties"), false);
}

TEST(Schema, TopLevelPropertiesAreTheParsersKeys) {
  std::set<std::string> parser(top_level_keys().begin(), top_level_keys().end());
  EXPECT_EQ(keys_of(schema().at("properties")), parser);
}

TEST(Schema, RequiredTopLevelKeys) {
  std::set<std::string> required(schema().at("required").begin(), schema().at("required").end());
  EXPECT_EQ(required, (std::set<std::string>{"name", "dims", "buffers", "reference", "tests"}));
  // A kernel has `dispatch:`, a kernel family `kernels:` and `dispatches:`.
  EXPECT_EQ(schema().at("anyOf"), json::parse(R"([{"required": ["dispatch"]}, {"required": ["kernels", "dispatches"]}])"));
  // The kernel itself is a `body:`, or a hand-written `source:` with `entries:`: the parser enforces one.
}

void walk(const json& node, const std::string& at, const std::function<void(const json&, const std::string&)>& fn) {
  if (node.is_object()) {
    fn(node, at);
    for (auto it = node.begin(); it != node.end(); ++it) walk(it.value(), at + "/" + it.key(), fn);
  } else if (node.is_array()) {
    for (size_t i = 0; i < node.size(); ++i) walk(node[i], at + "/" + std::to_string(i), fn);
  }
}

TEST(Schema, EveryPropertyHasADescription) {
  int properties = 0;
  walk(schema(), "", [&](const json& node, const std::string& at) {
    if (!node.contains("properties") || !node["properties"].is_object() || at.find("/if") != std::string::npos) return;
    for (auto it = node["properties"].begin(); it != node["properties"].end(); ++it) {
      ++properties;
      EXPECT_TRUE(it.value().contains("description")) << at << "/properties/" << it.key();
    }
  });
  EXPECT_GT(properties, 60);
  for (auto it = schema()["$defs"].begin(); it != schema()["$defs"].end(); ++it) {
    EXPECT_TRUE(it.value().contains("description")) << "$defs/" << it.key();
  }
}

TEST(Schema, ObjectsWithPropertiesRejectOtherKeys) {
  walk(schema(), "", [&](const json& node, const std::string& at) {
    if (!node.contains("properties") || at.find("/if") != std::string::npos) return;
    EXPECT_EQ(node.value("additionalProperties", json(true)), json(false)) << at;
  });
}

// Each mapping the parser reads, with an unknown key injected; the parser's hint then lists the
// keys it accepts ("<what> accepts: a, b, c"), which must be the schema's properties there.
struct KeyContext {
  const char* name;
  const char* find;     // text in kMinimalSpec to replace
  const char* replace;  // ... with this (containing the unknown key)
  const char* pointer;  // the schema object holding the properties
};

const KeyContext kContexts[] = {
    {"top", "tests:\n", "zzzzzzzzzzzz: 1\ntests:\n", ""},
    {"dim", "n: {min: 1}", "n: {min: 1, zzzzzzzzzzzz: 1}", "/$defs/dim/anyOf/1"},
    {"precondition", "tunables:\n", "preconditions:\n  - {check: n > 0, message: m, zzzzzzzzzzzz: 1}\ntunables:\n",
     "/$defs/precondition"},
    {"tunable", "default: 32}", "default: 32, zzzzzzzzzzzz: 1}", "/$defs/tunable"},
    {"buffer", "access: read}", "access: read, zzzzzzzzzzzz: 1}", "/$defs/buffer"},
    {"scalar", "dispatch:\n", "scalars:\n  s: {type: float, zzzzzzzzzzzz: 1}\ndispatch:\n", "/$defs/scalar"},
    {"function_constant", "dispatch:\n", "function_constants:\n  f: {type: bool, index: 0, zzzzzzzzzzzz: 1}\ndispatch:\n",
     "/$defs/function_constant"},
    {"threadgroup_array", "dispatch:\n", "threadgroup_memory:\n  t: {type: float, count: 1, zzzzzzzzzzzz: 1}\ndispatch:\n",
     "/$defs/threadgroup_array"},
    {"dispatch", "  threads_per_threadgroup: [TG]\n", "  threads_per_threadgroup: [TG]\n  zzzzzzzzzzzz: 1\n", "/$defs/dispatch"},
    {"cost", "tests:\n", "cost: {flops: n, zzzzzzzzzzzz: 1}\ntests:\n", "/$defs/cost"},
    {"cost_quantity", "tests:\n", "cost: {extra: {q: {value: n, zzzzzzzzzzzz: 1}}}\ntests:\n",
     "/$defs/cost_quantity/anyOf/1"},
    {"tests", "  cases:\n", "  zzzzzzzzzzzz: 1\n  cases:\n", "/$defs/tests"},
    {"tolerance", "  cases:\n", "  tolerance: {float: {exact: true, zzzzzzzzzzzz: 1}}\n  cases:\n", "/$defs/tolerance"},
    {"input_fill", "  cases:\n", "  inputs: {dist: normal, zzzzzzzzzzzz: 1}\n  cases:\n", "/$defs/input_fill"},
    {"test_case", "dims: {n: 5}}", "dims: {n: 5}, zzzzzzzzzzzz: 1}", "/$defs/test_case"},
};

TEST(Schema, NestedPropertiesAreTheParsersKeys) {
  for (const auto& c : kContexts) {
    SCOPED_TRACE(c.name);
    std::string text = kMinimalSpec;
    size_t at = text.find(c.find);
    ASSERT_NE(at, std::string::npos);
    text.replace(at, std::strlen(c.find), c.replace);
    auto r = load_text(text);
    const support::Diagnostic* unknown = nullptr;
    for (const auto& d : r.diags.all()) {
      if (d.kind == support::ErrorKind::unknown_key) unknown = &d;
    }
    ASSERT_NE(unknown, nullptr) << r.diags.format_all();
    size_t list = unknown->hint.find("accepts: ");
    ASSERT_NE(list, std::string::npos) << unknown->hint;
    std::set<std::string> parser;
    std::stringstream keys(unknown->hint.substr(list + 9));
    for (std::string k; std::getline(keys, k, ',');) parser.insert(trim(k));
    const json& node = schema().at(json::json_pointer(c.pointer));
    EXPECT_EQ(keys_of(node.at("properties")), parser);
    EXPECT_EQ(node.at("additionalProperties"), false);
  }
}

TEST(Schema, ElementTypesAreTheParsers) {
  std::vector<std::string> names = schema().at("/$defs/element_type/enum"_json_pointer);
  EXPECT_EQ(names, ir::spec_type_names());
}

// ---- specs against the schema ----

std::vector<fs::path> valid_specs() {
  std::vector<fs::path> out = yaml_files(source_dir() / "specs");
  for (const auto& p : yaml_files(spec_test_dir() / "accepts")) {
    if (first_line(p).find("known-bug:") == std::string::npos) out.push_back(p);
  }
  return out;
}

TEST(SchemaValidation, ShippedAndAcceptedSpecsValidate) {
  auto specs = valid_specs();
  EXPECT_GE(specs.size(), 4u);
  for (const auto& p : specs) {
    auto errors = schema_errors(p);
    EXPECT_TRUE(errors.empty()) << p << ":\n" << joined(errors);
  }
}

// Rejected inputs whose fault is structural: the schema flags them in an editor too.
TEST(SchemaValidation, StructurallyWrongSpecsDoNotValidate) {
  for (const char* name : {"unknown_top_level_key", "unknown_nested_key", "wrong_type_list_for_mapping",
                           "wrong_type_string_for_integer", "wrong_type_boolean", "missing_required_field",
                           "missing_top_level_field", "precondition_missing_message", "invalid_identifier",
                           "unknown_access", "unknown_distribution", "unknown_element_type", "scalar_type_not_4_bytes",
                           "buffer_index_out_of_range", "tunable_values_not_distinct", "type_parameter_without_types",
                           "empty_buffer_shape", "no_test_cases", "function_constant_index_out_of_range",
                           "test_case_constant_value_twice", "test_case_constant_without_values"}) {
    fs::path p = spec_test_dir() / "rejects" / (std::string(name) + ".yaml");
    ASSERT_TRUE(fs::exists(p)) << p;
    EXPECT_FALSE(schema_errors(p).empty()) << name << " validates against the schema";
  }
}

TEST(SchemaValidation, ValidatorSelfCheck) {
  MiniValidator v(schema());
  json ok = yaml_to_json(YAML::Load(kMinimalSpec));
  EXPECT_TRUE(v.validate(ok).empty()) << joined(v.validate(ok));
  json bad = ok;
  bad["buffers"]["x"]["access"] = "rw";
  EXPECT_FALSE(v.validate(bad).empty());
  json choice = ok;
  choice["tests"]["inputs"] = {{"dist", "choice"}};
  EXPECT_FALSE(v.validate(choice).empty());  // choice needs values
  EXPECT_EQ(scalar_to_json(YAML::Load("1.0e-6")), json(1.0e-6));
  EXPECT_EQ(scalar_to_json(YAML::Load("\"32\"")), json("32"));
  EXPECT_EQ(scalar_to_json(YAML::Load("32")), json(32));
  EXPECT_EQ(scalar_to_json(YAML::Load("TG / 32")), json("TG / 32"));
}

}  // namespace
}  // namespace mtlgen::spec::testing
