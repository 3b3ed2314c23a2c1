#pragma once
// A small validator for the subset of JSON Schema (draft 2020-12) that mtlgen's schemas use:
// specs/schema.json (tests/spec/schema_test.cpp) and the package manifest's
// templates/package/manifest.schema.json (tests/package). A keyword it does not know is an error,
// so a schema cannot silently outgrow it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace mtlgen::testing {

using nlohmann::json;

inline const json& resolve(const json& root, const json& node) {
  if (!node.contains("$ref")) return node;
  std::string ref = node["$ref"];
  EXPECT_EQ(ref.rfind("#/", 0), 0u) << ref;
  return root.at(json::json_pointer(ref.substr(1)));
}

// ---- a small validator for the subset of JSON Schema that specs/schema.json uses ----

class MiniValidator {
 public:
  explicit MiniValidator(const json& root) : root_(root) {}

  std::vector<std::string> validate(const json& value) const {
    std::vector<std::string> errors;
    check(root_, value, "", errors);
    return errors;
  }

 private:
  static bool has_type(const json& v, const std::string& t) {
    if (t == "object") return v.is_object();
    if (t == "array") return v.is_array();
    if (t == "string") return v.is_string();
    if (t == "integer") return v.is_number_integer();
    if (t == "number") return v.is_number();
    if (t == "boolean") return v.is_boolean();
    if (t == "null") return v.is_null();
    return false;
  }

  bool valid(const json& s, const json& v) const {
    std::vector<std::string> e;
    check(s, v, "", e);
    return e.empty();
  }

  void check(const json& s, const json& v, const std::string& at, std::vector<std::string>& err) const {
    static const std::set<std::string> annotations = {"description", "title", "default", "$schema", "$id", "$defs",
                                                      "examples", "$comment"};
    auto fail = [&](const std::string& what) { err.push_back((at.empty() ? "/" : at) + ": " + what); };
    for (auto it = s.begin(); it != s.end(); ++it) {
      const std::string& k = it.key();
      const json& x = it.value();
      if (annotations.count(k) || k == "then") continue;
      if (k == "$ref") {
        check(resolve(root_, s), v, at, err);
      } else if (k == "type") {
        bool ok = false;
        if (x.is_string()) ok = has_type(v, x);
        for (const auto& t : x.is_array() ? x : json::array()) ok = ok || has_type(v, t);
        if (!ok) fail("is not " + x.dump());
      } else if (k == "enum") {
        if (std::find(x.begin(), x.end(), v) == x.end()) fail(v.dump() + " is not one of " + x.dump());
      } else if (k == "const") {
        if (v != x) fail(v.dump() + " is not " + x.dump());
      } else if (k == "properties") {
        if (!v.is_object()) continue;
        for (auto p = x.begin(); p != x.end(); ++p) {
          if (v.contains(p.key())) check(p.value(), v[p.key()], at + "/" + p.key(), err);
        }
      } else if (k == "required") {
        if (!v.is_object()) continue;
        for (const auto& r : x) {
          if (!v.contains(r.get<std::string>())) fail("missing " + r.dump());
        }
      } else if (k == "additionalProperties") {
        if (!v.is_object()) continue;
        json props = s.value("properties", json::object());
        for (auto p = v.begin(); p != v.end(); ++p) {
          if (props.contains(p.key())) continue;
          if (x.is_boolean() && !x.get<bool>()) fail("unknown key `" + p.key() + "`");
          if (x.is_object()) check(x, p.value(), at + "/" + p.key(), err);
        }
      } else if (k == "propertyNames") {
        if (!v.is_object()) continue;
        for (auto p = v.begin(); p != v.end(); ++p) check(x, json(p.key()), at + "/" + p.key() + "(name)", err);
      } else if (k == "items") {
        if (!v.is_array()) continue;
        for (size_t i = 0; i < v.size(); ++i) check(x, v[i], at + "/" + std::to_string(i), err);
      } else if (k == "minItems") {
        if (v.is_array() && v.size() < x.get<size_t>()) fail("fewer than " + x.dump() + " items");
      } else if (k == "maxItems") {
        if (v.is_array() && v.size() > x.get<size_t>()) fail("more than " + x.dump() + " items");
      } else if (k == "uniqueItems") {
        if (v.is_array() && x.get<bool>() && std::set<json>(v.begin(), v.end()).size() != v.size()) fail("repeated items");
      } else if (k == "minimum") {
        if (v.is_number() && v.get<double>() < x.get<double>()) fail("below " + x.dump());
      } else if (k == "maximum") {
        if (v.is_number() && v.get<double>() > x.get<double>()) fail("above " + x.dump());
      } else if (k == "minLength") {
        if (v.is_string() && v.get<std::string>().size() < x.get<size_t>()) fail("too short");
      } else if (k == "pattern") {
        if (v.is_string() && !std::regex_search(v.get<std::string>(), std::regex(x.get<std::string>()))) {
          fail(v.dump() + " does not match " + x.dump());
        }
      } else if (k == "anyOf") {
        if (std::none_of(x.begin(), x.end(), [&](const json& sub) { return valid(sub, v); })) fail(v.dump() + " matches no alternative");
      } else if (k == "if") {
        if (valid(x, v) && s.contains("then")) check(s["then"], v, at, err);
      } else {
        fail("the test's validator does not know keyword `" + k + "`");
      }
    }
  }

  const json& root_;
};

}  // namespace mtlgen::testing
