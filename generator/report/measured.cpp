#include "report/measured.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace mtlgen::report {

namespace {

using Json = nlohmann::json;

constexpr const char* kTuningFormat = "mtlgen-tuning-1";

enum class Kind { object, string, number, array };

bool is(const Json& j, Kind kind) {
  switch (kind) {
    case Kind::object: return j.is_object();
    case Kind::string: return j.is_string();
    case Kind::number: return j.is_number();
    case Kind::array: return j.is_array();
  }
  return false;
}

const char* name_of(Kind kind) {
  switch (kind) {
    case Kind::object: return "an object";
    case Kind::string: return "a string";
    case Kind::number: return "a number";
    case Kind::array: return "an array";
  }
  return "";
}

// `object[key]`, which must exist with the given kind; `where` says whose key it is.
const Json& field(const Json& object, const char* key, Kind kind, const std::string& where) {
  if (!object.is_object() || !object.contains(key) || !is(object.at(key), kind))
    throw MeasuredError(fmt::format("{}: `{}` must be {}", where, key, name_of(kind)));
  return object.at(key);
}

// The autotune file: per device and kernel, the fastest variant of each type choice.
std::vector<MeasuredSet> parse_tuning(const Json& doc, const std::string& file) {
  std::vector<MeasuredSet> sets;
  for (const auto& [device, kernels] : field(doc, "devices", Kind::object, "the tuning file").items()) {
    if (!kernels.is_object()) throw MeasuredError(fmt::format("device `{}` must map kernels to objects", device));
    for (const auto& [kernel, choices] : kernels.items()) {
      const std::string where = fmt::format("device `{}`, kernel `{}`", device, kernel);
      if (!choices.is_object()) throw MeasuredError(where + " must map type choices to objects");
      MeasuredSet set{file, kernel, "measured: " + device, "", Json::object(), {}};
      for (const auto& [types, entry] : choices.items()) {
        const std::string at = fmt::format("{}, types `{}`", where, types);
        set.points.push_back({field(entry, "entry_point", Kind::string, at).get<std::string>(),
                              field(entry, "median_us", Kind::number, at).get<double>(), {}});
        // Autotune runs every type choice at one problem size; the last entry's dims stand for all.
        if (entry.contains("dims")) set.dims = field(entry, "dims", Kind::object, at);
      }
      sets.push_back(std::move(set));
    }
  }
  return sets;
}

// A family's `members`: each dispatch's median, in dispatch order.
std::vector<MeasuredMember> parse_members(const Json& r, const std::string& at) {
  std::vector<MeasuredMember> members;
  if (!r.contains("members")) return members;
  const Json& list = field(r, "members", Kind::array, at);
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string where = fmt::format("{}.members[{}]", at, i);
    members.push_back({field(list[i], "dispatch", Kind::number, where).get<int64_t>(),
                       field(list[i], "kernel", Kind::string, where).get<std::string>(),
                       field(list[i], "median_us", Kind::number, where).get<double>()});
  }
  return members;
}

// `mtlgen bench --gpu cuda --json`: one result per tune point and case; one set per kernel and case.
std::vector<MeasuredSet> parse_cuda(const Json& doc, const std::string& file) {
  const std::string label =
      fmt::format("measured: {} (CUDA, relative guide only)", field(doc, "gpu", Kind::string, "the bench file").get<std::string>());
  std::vector<MeasuredSet> sets;
  const Json& results = field(doc, "results", Kind::array, "the bench file");
  for (size_t i = 0; i < results.size(); ++i) {
    const Json& r = results[i];
    const std::string at = fmt::format("results[{}]", i);
    const std::string kernel = field(r, "kernel", Kind::string, at), case_name = field(r, "case", Kind::string, at);
    const std::string entry_point = field(r, "entry_point", Kind::string, at);
    if (r.contains("error")) continue;  // that tune point failed on the GPU: nothing measured
    const double us = field(r, "median_us", Kind::number, at);
    auto set = std::find_if(sets.begin(), sets.end(),
                            [&](const MeasuredSet& s) { return s.kernel == kernel && s.case_name == case_name; });
    if (set == sets.end()) set = sets.insert(sets.end(), {file, kernel, label, case_name, r.value("dims", Json::object()), {}});
    set->points.push_back({entry_point, us, parse_members(r, at)});
  }
  return sets;
}

const ir::Kernel* find_kernel(const std::vector<ir::Kernel>& kernels, const std::string& name) {
  for (const auto& k : kernels)
    if (k.name == name) return &k;
  return nullptr;
}

bool has_entry_point(const ir::Kernel& k, const std::string& entry_point) {
  return std::any_of(k.variants.begin(), k.variants.end(), [&](const ir::Variant& v) { return v.entry_point == entry_point; });
}

// Whether `members` are the family's dispatches, in order (an empty list is: nothing to draw).
bool are_dispatches(const ir::Kernel& k, const std::vector<MeasuredMember>& members) {
  if (members.empty()) return true;
  if (!k.is_family() || members.size() != k.family->dispatches.size()) return false;
  for (size_t i = 0; i < members.size(); ++i) {
    if (members[i].dispatch != int64_t(i + 1) || members[i].kernel != k.family->dispatches[i].kernel) return false;
  }
  return true;
}

}  // namespace

std::vector<MeasuredSet> parse_measured(const Json& doc, const std::string& file) {
  if (doc.is_object() && doc.value("format", "") == kTuningFormat) return parse_tuning(doc, file);
  if (doc.is_object() && doc.contains("results")) return parse_cuda(doc, file);
  throw MeasuredError(fmt::format(
      "neither a tuning file from autotune_<kernel> (\"format\": \"{}\") nor the output of `mtlgen bench --gpu cuda "
      "--json` (\"gpu\" and \"results\")", kTuningFormat));
}

std::vector<MeasuredSet> read_measured(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw MeasuredError("cannot read the file");
  std::ostringstream text;
  text << in.rdbuf();
  Json doc;
  try {
    doc = Json::parse(text.str());
  } catch (const Json::parse_error& e) {
    throw MeasuredError(fmt::format("not JSON: {}", e.what()));
  }
  return parse_measured(doc, file.string());
}

std::vector<MeasuredSet> match_library(std::vector<MeasuredSet> sets, const std::vector<ir::Kernel>& kernels,
                                       std::vector<std::string>& warnings) {
  std::vector<MeasuredSet> kept;
  for (auto& set : sets) {
    const ir::Kernel* k = find_kernel(kernels, set.kernel);
    if (!k) {
      warnings.push_back(fmt::format("{}: warning: kernel `{}` ({}) is not in the library; its times are ignored",
                                     set.file, set.kernel, set.label));
      continue;
    }
    std::erase_if(set.points, [&](const MeasuredPoint& p) {
      if (has_entry_point(*k, p.entry_point)) return false;
      warnings.push_back(fmt::format("{}: warning: kernel `{}` has no variant `{}` ({}); its time is ignored", set.file,
                                     set.kernel, p.entry_point, set.label));
      return true;
    });
    for (auto& p : set.points) {
      if (are_dispatches(*k, p.members)) continue;
      warnings.push_back(fmt::format("{}: warning: the members of `{}` ({}) are not family `{}`'s dispatches in order; "
                                     "its split is ignored", set.file, p.entry_point, set.label, set.kernel));
      p.members.clear();
    }
    if (!set.points.empty()) kept.push_back(std::move(set));
  }
  return kept;
}

Json to_json(const MeasuredSet& set) {
  Json points = Json::array();
  for (const auto& p : set.points) {
    points.push_back({{"entry_point", p.entry_point}, {"median_us", p.median_us}});
    if (p.members.empty()) continue;
    Json& members = points.back()["members"] = Json::array();
    for (const auto& m : p.members)
      members.push_back({{"dispatch", m.dispatch}, {"kernel", m.kernel}, {"median_us", m.median_us}});
  }
  Json j = {{"file", set.file}, {"label", set.label}, {"dims", set.dims}, {"points", points}};
  j["case"] = set.case_name.empty() ? Json(nullptr) : Json(set.case_name);
  return j;
}

}  // namespace mtlgen::report
