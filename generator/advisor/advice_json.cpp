// The advisor's machine-readable form (report.json beside the page; docs/report.md lists the keys).
#include "advisor/advisor.h"

#include <algorithm>

namespace mtlgen::advisor {

namespace {

using Json = nlohmann::json;

Json prediction_json(const Chip& chip, const Prediction& p) {
  return {{"chip", chip.name},
          {"time_us", p.time_us},
          {"floor_us", p.floor_us},
          {"compute_us", p.compute_us},
          {"launch_us", p.launch_us},
          {"dram_us", p.dram_us},
          {"load_us", p.load_us},
          {"latency_us", p.latency_us},
          {"imbalance", p.imbalance},
          {"parallelism", p.parallelism},
          {"coalescing", p.coalescing},
          {"threadgroups_per_core", p.threadgroups_per_core},
          {"resident_threads", p.resident_threads},
          {"bandwidth_gbs", p.bandwidth_gbs},
          {"percent_of_peak", 100 * p.bandwidth_gbs / chip.bandwidth_gbs},
          {"gflops", p.gflops}};
}

// What a prediction is made from, and its time on every chip (chips() order).
Json predicted_json(Json j, const Workload& w, const std::vector<Prediction>& per_chip) {
  j.update({{"unique_bytes", w.unique_bytes},
            {"flops", w.flops},
            {"threadgroups", w.threadgroups},
            {"threads_per_threadgroup", w.threads_per_threadgroup},
            {"threadgroup_memory_bytes", w.threadgroup_memory_bytes},
            {"loaded_bytes", std::max(w.loaded_bytes, w.unique_bytes)},
            {"coalescing", w.coalescing},
            {"bytes_in_flight", w.bytes_in_flight},
            {"sync_phases", w.sync_phases}});
  j["predictions"] = Json::array();
  for (size_t i = 0; i < per_chip.size(); ++i) j["predictions"].push_back(prediction_json(chips()[i], per_chip[i]));
  return j;
}

Json point_json(const Point& p) {
  return predicted_json({{"label", p.label}, {"entry_point", p.variant->entry_point}, {"counted", p.counted}}, p.workload,
                        p.per_chip);
}

Json finding_json(const Finding& f) {
  return {{"lint", f.lint},       {"kernel", f.kernel},   {"variant", f.variant},
          {"file", f.at.file},    {"line", f.at.line},    {"message", f.message},
          {"fix", f.fix},         {"text", f.text()}};
}

Json cost_json(const CostCheck& c) {
  Json j = {{"term", c.term}, {"counted", c.counted}, {"agrees", c.agrees}, {"message", c.message}};
  j["declared"] = c.declared < 0 ? Json(nullptr) : Json(c.declared);
  return j;
}

Json dispatch_json(const DispatchPrediction& d) {
  return predicted_json({{"dispatch", d.dispatch},
                         {"kernel", d.member->name},
                         {"entry_point", d.variant->entry_point},
                         {"dims", d.dims},
                         {"counted", d.counted}},
                        d.workload, d.per_chip);
}

Json family_point_json(const FamilyPoint& p) {
  Json j = {{"case", {{"name", p.test->name}, {"dims", p.test->dims}}}, {"entry_point", p.variant->entry_point}};
  j["total"] = Json::array();
  for (size_t i = 0; i < p.total_us.size(); ++i) j["total"].push_back({{"chip", chips()[i].name}, {"time_us", p.total_us[i]}});
  j["dispatches"] = Json::array();
  for (const auto& d : p.dispatches) j["dispatches"].push_back(dispatch_json(d));
  return j;
}

// A family: its realistic case, its first types' variant, and every variant at each of its cases;
// no counters, points or lints of its own.
Json family_json(const KernelAdvice& a, Json j) {
  j["case"] = {{"name", a.test->name}, {"dims", a.test->dims}};
  j["counted_variant"] = a.counted_variant->entry_point;  // the first types, which the page draws
  j["family"] = Json::array();
  for (const auto& p : a.family) j["family"].push_back(family_point_json(p));
  return j;
}

}  // namespace

Json to_json(const KernelAdvice& a) {
  const ir::Kernel& k = *a.kernel;
  Json j = {{"kernel", k.name}, {"spec", k.spec_path}, {"summary", k.summary}};
  if (!a.skipped.empty()) {
    j["skipped"] = a.skipped;
    return j;
  }
  if (k.is_family()) return family_json(a, std::move(j));
  j["case"] = {{"name", a.test->name}, {"dims", a.test->dims}};
  j["counted_variant"] = a.counted_variant->entry_point;
  if (a.counted_test) j["counted_case"] = {{"name", a.counted_test->name}, {"dims", a.counted_test->dims}};
  if (!a.count_error.empty()) j["count_error"] = a.count_error;
  j["counters"] = a.counters ? to_json(*a.counters) : Json(nullptr);
  j["cost"] = Json::array();
  for (const auto& c : a.cost) j["cost"].push_back(cost_json(c));
  j["points"] = Json::array();
  for (const auto& p : a.points) j["points"].push_back(point_json(p));
  j["findings"] = Json::array();
  for (const auto& f : a.findings) j["findings"].push_back(finding_json(f));
  return j;
}

}  // namespace mtlgen::advisor
