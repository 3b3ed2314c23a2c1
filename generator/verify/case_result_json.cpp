// A case's result as JSON: what the child sends its parent, checked field by field on the way in
// (verify/case_runner.h).
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "verify/case_runner.h"

namespace mtlgen::verify {

nlohmann::json to_json(const CaseResult& r) {
  nlohmann::json j;
  j["status"] = to_string(r.status);
  j["problems"] = nlohmann::json::array();
  for (const auto& p : r.problems) j["problems"].push_back({{"checker", p.checker}, {"message", p.message}});
  j["warnings"] = nlohmann::json::array();
  for (const auto& p : r.warnings) j["warnings"].push_back({{"checker", p.checker}, {"message", p.message}});
  j["outputs"] = nlohmann::json::array();
  for (const auto& o : r.outputs) {
    j["outputs"].push_back({{"buffer", o.buffer}, {"elements", o.elements}, {"max_abs", o.max_abs}, {"max_rel", o.max_rel},
                            {"nmse", o.nmse}, {"mismatches", o.mismatches}, {"nonfinite_mismatches", o.nonfinite_mismatches}});
  }
  j["sim_seconds"] = r.sim_seconds;
  j["reference_seconds"] = r.reference_seconds;
  j["fiber_switches"] = r.fiber_switches;
  j["threadgroups_as_loops"] = r.threadgroups_as_loops;
  j["output_digest"] = r.output_digest;
  j["coverage"] = r.coverage;
  if (!r.counters.is_null()) j["counters"] = r.counters;
  return j;
}

namespace {

using Json = nlohmann::json;

[[noreturn]] void bad_field(const std::string& field, const char* expected) {
  throw std::runtime_error(fmt::format("`{}` is not {}", field, expected));
}

const Json& field(const Json& object, const std::string& key, const std::string& path) {
  auto it = object.find(key);
  if (it == object.end()) bad_field(path + key, "there");
  return *it;
}

std::string text_field(const Json& object, const std::string& key, const std::string& path) {
  const Json& v = field(object, key, path);
  if (!v.is_string()) bad_field(path + key, "a string");
  return v.get<std::string>();
}

// NaN and infinities travel as null (JSON has no spelling for them).
double number_field(const Json& object, const std::string& key, const std::string& path) {
  const Json& v = field(object, key, path);
  if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (!v.is_number()) bad_field(path + key, "a number");
  return v.get<double>();
}

uint64_t count_field(const Json& object, const std::string& key, const std::string& path) {
  const Json& v = field(object, key, path);
  if (!v.is_number_unsigned()) bad_field(path + key, "a count");
  return v.get<uint64_t>();
}

const Json& array_field(const Json& object, const std::string& key) {
  const Json& v = field(object, key, "");
  if (!v.is_array()) bad_field(key, "an array");
  return v;
}

CaseStatus status_field(const Json& j) {
  std::string status = text_field(j, "status", "");
  for (auto s : {CaseStatus::pass, CaseStatus::fail, CaseStatus::error}) {  // all that run_case returns
    if (status == to_string(s)) return s;
  }
  bad_field("status", "PASS, FAIL or ERROR");
}

// `key`'s array of {checker, message} objects.
std::vector<Problem> problems_field(const Json& j, const std::string& key) {
  std::vector<Problem> out;
  const Json& list = array_field(j, key);
  for (size_t i = 0; i < list.size(); ++i) {
    std::string at = fmt::format("{}[{}].", key, i);
    if (!list[i].is_object()) bad_field(at, "an object");
    out.push_back({text_field(list[i], "checker", at), text_field(list[i], "message", at)});
  }
  return out;
}

}  // namespace

CaseResult case_result_from_json(const nlohmann::json& j) {
  if (!j.is_object()) bad_field("(the report)", "an object");
  CaseResult r;
  r.status = status_field(j);
  r.problems = problems_field(j, "problems");
  if (j.contains("warnings")) r.warnings = problems_field(j, "warnings");  // absent in older cached results
  const Json& outputs = array_field(j, "outputs");
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string at = fmt::format("outputs[{}].", i);
    const Json& o = outputs[i];
    if (!o.is_object()) bad_field(at, "an object");
    OutputStats s;
    s.buffer = text_field(o, "buffer", at);
    s.elements = count_field(o, "elements", at);
    s.max_abs = number_field(o, "max_abs", at);
    s.max_rel = number_field(o, "max_rel", at);
    s.nmse = number_field(o, "nmse", at);
    s.mismatches = count_field(o, "mismatches", at);
    s.nonfinite_mismatches = count_field(o, "nonfinite_mismatches", at);
    r.outputs.push_back(std::move(s));
  }
  r.sim_seconds = number_field(j, "sim_seconds", "");
  r.reference_seconds = number_field(j, "reference_seconds", "");
  r.fiber_switches = count_field(j, "fiber_switches", "");
  if (j.contains("threadgroups_as_loops")) r.threadgroups_as_loops = count_field(j, "threadgroups_as_loops", "");
  r.output_digest = text_field(j, "output_digest", "");
  if (j.contains("coverage")) r.coverage = text_field(j, "coverage", "");  // absent: the whole grid ran
  if (j.contains("counters")) r.counters = j["counters"];  // read by the advisor, which checks its fields
  if (r.status == CaseStatus::pass && !r.problems.empty()) bad_field("status", "PASS with problems listed");
  return r;
}

}  // namespace mtlgen::verify
