#include "cuda/bench.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "cuda/gpu_run.h"
#include "check_msl/checked_library.h"
#include "support/exit_code.h"

namespace mtlgen::cuda {

namespace {

// The cases bench times for `k`: --case, else the spec's benchmark cases, else its largest test case.
std::vector<const ir::TestCase*> bench_cases(const ir::Kernel& k, const BenchOptions& o) {
  std::vector<const ir::TestCase*> out;
  for (const auto& t : k.tests.cases)
    if (o.case_filter.empty() ? t.benchmark : t.name == o.case_filter) out.push_back(&t);
  if (!out.empty() || !o.case_filter.empty() || k.tests.cases.empty()) return out;
  auto size = [](const ir::TestCase& t) {
    int64_t n = 1;
    for (const auto& [name, v] : t.dims) n *= std::max<int64_t>(v, 1);
    return n;
  };
  out.push_back(&*std::max_element(k.tests.cases.begin(), k.tests.cases.end(),
                                   [&](const auto& a, const auto& b) { return size(a) < size(b); }));
  return out;
}

// Bytes the spec's cost model says a dispatch moves (read + written); 0 where it gives none.
double bytes_moved(const ir::Kernel& k, const ir::TestCase& t, const ir::Variant& v) {
  expr::Env env = ir::Kernel::env_for(t.dims, v);
  double bytes = 0;
  try {
    if (k.cost.bytes_read) bytes += double(expr::evaluate(*k.cost.bytes_read, env));
    if (k.cost.bytes_written) bytes += double(expr::evaluate(*k.cost.bytes_written, env));
  } catch (const expr::EvalError&) {
    return 0;
  }
  return bytes;
}

std::string dims_text(const ir::TestCase& t) {
  std::vector<std::string> parts;
  for (const auto& [name, v] : t.dims) parts.push_back(fmt::format("{}={}", name, v));
  return fmt::format("{}", fmt::join(parts, ", "));
}

struct Timing {
  const ir::Variant* variant = nullptr;
  double median_us = 0, min_us = 0, gbps = 0;
  std::vector<double> member_us;  // a family's: each dispatch's median within the run
  std::string error;
};

// A family's dispatches in order, each named by its kernel.
std::vector<std::string> dispatch_names(const ir::Kernel& k) {
  std::vector<std::string> names;
  if (k.is_family())
    for (const auto& d : k.family->dispatches) names.push_back(d.kernel);
  return names;
}

Timing time_variant(const ir::Kernel& k, const ir::TestCase& t, const ir::Variant& v, const GpuModule& m,
                    const BenchOptions& o, const fs::path& dir, std::map<std::string, std::string>& device) {
  Timing r;
  r.variant = &v;
  try {
    prepare_case({&k, &v, &t, {}}, dir, fmt::format("bench {} {}", o.warmups, o.repeats));
  } catch (const std::runtime_error& e) {
    r.error = e.what();
    return r;
  }
  int status = 0;
  std::string output = verify::run_program({m.executable.string(), dir.string()}, dir, status, 600);
  auto result = read_result(dir);
  if (status != 0 || !result.count("ok")) {
    r.error = result.count("error") ? result["error"] : fmt::format("exit status {}: {}", status, output.substr(0, 500));
    return r;
  }
  device["device"] = result["device"];
  device["peak_gbps"] = result["peak_gbps"];
  r.median_us = std::stod(result["median_us"]);
  r.min_us = std::stod(result["min_us"]);
  for (size_t i = 0; result.count(fmt::format("member_us_{}", i)); ++i)
    r.member_us.push_back(std::stod(result[fmt::format("member_us_{}", i)]));
  double bytes = bytes_moved(k, t, v);
  r.gbps = bytes > 0 ? bytes / (r.median_us * 1e3) : 0;
  return r;
}

// A family's run split by dispatch (`names`: dispatch_names): each member's median and its share of
// the members' sum (the medians need not add up to the run's).
void print_members(std::ostream& out, const std::vector<std::string>& names, const Timing& r) {
  double sum = 0;
  for (double us : r.member_us) sum += us;
  for (size_t i = 0; i < r.member_us.size() && i < names.size(); ++i)
    fmt::print(out, "      {:>2}. {:<34} {:>10.2f} us  {:>4.0f}%\n", i + 1, names[i], r.member_us[i],
               sum > 0 ? 100 * r.member_us[i] / sum : 0.0);
}

// One line per tune point, grouped by element types, the fastest of each group marked; a family's
// split by `names` (dispatch_names).
void print_sweep(std::ostream& out, const ir::Kernel& k, const std::vector<Timing>& timings, double peak,
                 const std::vector<std::string>& names) {
  std::map<std::string, std::vector<const Timing*>> by_types;
  for (const auto& r : timings) {
    std::vector<std::string> types;
    for (const auto& [name, type] : r.variant->types) types.push_back(fmt::format("{}={}", name, ir::info(type).suffix));
    by_types[fmt::format("{}", fmt::join(types, ", "))].push_back(&r);
  }
  for (const auto& [types, group] : by_types) {
    fmt::print(out, "  {} {}\n", k.name, types.empty() ? "" : "(" + types + ")");
    const Timing* best = nullptr;
    for (const Timing* r : group)
      if (r->error.empty() && (!best || r->median_us < best->median_us)) best = r;
    for (const Timing* r : group) {
      if (!r->error.empty()) {
        fmt::print(out, "    {:<28} error: {}\n", k.describe_tuning(*r->variant), r->error);
        continue;
      }
      std::string share = peak > 0 && r->gbps > 0 ? fmt::format(" ({:.0f}% of peak)", 100 * r->gbps / peak) : "";
      fmt::print(out, "    {:<28} {:>10.2f} us  {:>8.1f} GB/s{}{}\n", k.describe_tuning(*r->variant), r->median_us, r->gbps,
                 share, r == best ? "  <- best" : "");
      print_members(out, names, *r);
    }
  }
}

nlohmann::json sweep_json(const ir::Kernel& k, const ir::TestCase& t, const std::vector<Timing>& timings,
                          const std::vector<std::string>& names) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& r : timings) {
    nlohmann::json j = {{"kernel", k.name}, {"case", t.name}, {"dims", t.dims}, {"entry_point", r.variant->entry_point},
                        {"tuning", r.variant->tunables}};
    nlohmann::json types = nlohmann::json::object();
    for (const auto& [name, type] : r.variant->types) types[name] = ir::info(type).suffix;
    j["types"] = types;
    if (!r.error.empty()) j["error"] = r.error;
    else j.update({{"median_us", r.median_us}, {"min_us", r.min_us}, {"gb_per_s", r.gbps}});
    if (!r.member_us.empty()) {
      j["members"] = nlohmann::json::array();
      for (size_t i = 0; i < r.member_us.size() && i < names.size(); ++i)
        j["members"].push_back({{"dispatch", i + 1}, {"kernel", names[i]}, {"median_us", r.member_us[i]}});
    }
    list.push_back(j);
  }
  return list;
}

}  // namespace

int run_bench(const BenchOptions& o, std::ostream& out, std::ostream& err) {
  support::Diagnostics diags;
  auto kernels = check_msl::load_library(o.inputs, diags, o.include_dirs);
  fmt::print(err, "{}", diags.format_all());
  if (diags.has_errors()) return support::kSpecErrors;
  auto nvcc = usable_nvcc("bench", out);
  if (!nvcc) return support::kOk;
  std::vector<const ir::Kernel*> selected;
  for (const ir::Kernel* k : gpu_kernels(kernels))
    if (o.kernel_filter.empty() || k->name == o.kernel_filter) selected.push_back(k);
  auto modules = build_modules(selected, o.module, *nvcc, support::job_count(0), out);
  nlohmann::json results = nlohmann::json::array();
  std::map<std::string, std::string> device;
  bool failed = false;
  for (const ir::Kernel* k : selected) {
    const GpuModule& m = modules.at(k->name);
    if (!m.error.empty()) {
      fmt::print(out, "{}: {}\n", k->name, m.error);
      failed = true;
      continue;
    }
    const std::vector<std::string> names = dispatch_names(*k);
    for (const ir::TestCase* t : bench_cases(*k, o)) {
      std::vector<Timing> timings;
      for (const auto& v : k->variants) {
        if (!k->variant_violation(t->dims, v).empty()) continue;
        timings.push_back(time_variant(*k, *t, v, m, o, case_dir(o.module, 0), device));
        failed |= !timings.back().error.empty();
      }
      double peak = device.count("peak_gbps") ? std::stod(device["peak_gbps"]) : 0;
      fmt::print(out, "{} {} ({}) on {} (DRAM peak {:.0f} GB/s), median of {} launches after {} warm-ups, L2 flushed:\n",
                 k->name, t->name, dims_text(*t), device["device"], peak, o.repeats, o.warmups);
      print_sweep(out, *k, timings, peak, names);
      for (auto& j : sweep_json(*k, *t, timings, names)) results.push_back(j);
    }
  }
  std::error_code ignored;
  fs::remove_all(case_dir(o.module, 0).parent_path(), ignored);
  if (!o.json_path.empty()) {
    nlohmann::json doc = {{"gpu", device["device"]},
                          {"dram_peak_gb_per_s", device.count("peak_gbps") ? std::stod(device["peak_gbps"]) : 0.0},
                          {"note", "CUDA timings of the MSL on an NVIDIA GPU: a relative guide between variants, not an Apple GPU timing"},
                          {"warmups", o.warmups}, {"repeats", o.repeats}, {"results", results}};
    std::ofstream(o.json_path) << doc.dump(2) << "\n";
  }
  return failed ? support::kVerifyFailed : support::kOk;
}

}  // namespace mtlgen::cuda
