#include "verify/verify.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <unistd.h>

#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <thread>

#include "cli/driver.h"
#include "support/output_set.h"
#include "verify/case_runner.h"

namespace mtlgen::verify {

namespace {

struct WorkItem {
  const ir::Kernel* kernel;
  const ir::Variant* variant;
  const ir::TestCase* test;
  const SimModule* module;
  ir::ConstantSetting constants;  // one of kernel->constant_settings(*test)
};

struct Finished {
  WorkItem item;
  CaseResult result;
};

std::vector<WorkItem> plan(const std::vector<ir::Kernel>& kernels, const std::vector<std::unique_ptr<SimModule>>& modules,
                           const VerifyOptions& o) {
  std::vector<WorkItem> items;
  size_t index = 0;
  for (size_t k = 0; k < kernels.size(); ++k) {
    for (const auto& v : kernels[k].variants) {
      if (!o.all_variants && !v.is_default_tuning) continue;
      for (const auto& t : kernels[k].tests.cases) {
        if (!o.case_filter.empty() && t.name != o.case_filter) continue;
        for (auto& constants : kernels[k].constant_settings(t)) {
          if (index++ % static_cast<size_t>(o.shard_count) != static_cast<size_t>(o.shard_index - 1)) continue;
          items.push_back({&kernels[k], &v, &t, modules[k].get(), std::move(constants)});
        }
      }
    }
  }
  return items;
}

std::string stats_text(const CaseResult& r) {
  std::string text;
  for (const auto& s : r.outputs) {
    text += fmt::format("  {}: max|d| {:.2g} rel {:.2g} nmse {:.2g}", s.buffer, s.max_abs, s.max_rel, s.nmse);
    if (s.nonfinite_mismatches) text += fmt::format(" +{} NaN/inf mismatches", s.nonfinite_mismatches);
  }
  return text;
}

void print_case(std::ostream& out, size_t done, size_t total, const Finished& f, bool quiet) {
  bool ok = f.result.status == CaseStatus::pass;
  if (quiet && ok) return;
  int width = static_cast<int>(std::to_string(total).size());
  std::string constants = f.item.kernel->describe(f.item.constants);
  fmt::print(out, "[{:>{}}/{}] {:<5} {} {}{}{} ({:.2f} s)\n", done, width, total, to_string(f.result.status),
             f.item.variant->entry_point, f.item.test->name, constants.empty() ? "" : " [" + constants + "]",
             stats_text(f.result), f.result.sim_seconds);
  for (const auto& p : f.result.problems) {
    fmt::print(out, "    {}:{}: [{}] {}\n", f.item.kernel->spec_path, f.item.test->loc.line, p.checker, p.message);
  }
}

std::vector<Finished> run_all(const std::vector<WorkItem>& items, const VerifyOptions& o, std::ostream& out) {
  int jobs = o.jobs > 0 ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
  std::vector<Finished> finished;
  std::deque<size_t> pending;
  for (size_t i = 0; i < items.size(); ++i) pending.push_back(i);
  std::vector<std::pair<size_t, RunningCase>> running;
  while (!pending.empty() || !running.empty()) {
    while (!pending.empty() && static_cast<int>(running.size()) < jobs) {
      const WorkItem& w = items[pending.front()];
      CaseRequest request{w.kernel, w.variant, w.test, w.module, o.seed, o.workers, o.exact_races, w.constants};
      running.emplace_back(pending.front(), start_case(request, o.timeout_seconds));
      pending.pop_front();
    }
    bool progressed = false;
    for (size_t i = 0; i < running.size();) {
      CaseResult result;
      if (poll_case(running[i].second, result, o.timeout_seconds)) {
        finished.push_back({items[running[i].first], std::move(result)});
        print_case(out, finished.size(), items.size(), finished.back(), o.quiet);
        running.erase(running.begin() + static_cast<long>(i));
        progressed = true;
      } else {
        ++i;
      }
    }
    if (!progressed) ::usleep(2000);
  }
  return finished;
}

void print_summary(std::ostream& out, const std::vector<ir::Kernel>& kernels, const std::vector<Finished>& finished) {
  fmt::print(out, "\n{:<16} {:>9} {:>6} {:>7} {:>7}\n", "kernel", "variants", "cases", "passed", "failed");
  for (const auto& k : kernels) {
    std::set<std::string> variants, cases;
    int passed = 0, failed = 0;
    for (const auto& f : finished) {
      if (f.item.kernel != &k) continue;
      variants.insert(f.item.variant->entry_point);
      cases.insert(f.item.test->name);
      (f.result.status == CaseStatus::pass ? passed : failed)++;
    }
    fmt::print(out, "{:<16} {:>9} {:>6} {:>7} {:>7}\n", k.name, variants.size(), cases.size(), passed, failed);
  }
}

// The function constants a case ran with, by name, as JSON booleans, integers or numbers.
nlohmann::json constants_json(const ir::Kernel& k, const ir::ConstantSetting& setting) {
  nlohmann::json j = nlohmann::json::object();
  for (size_t i = 0; i < k.function_constants.size() && i < setting.size(); ++i) {
    const auto& f = k.function_constants[i];
    if (f.type == ir::ScalarType::boolean) {
      j[f.name] = setting[i] != 0;
    } else if (ir::info(f.type).is_float) {
      j[f.name] = setting[i];
    } else {
      j[f.name] = static_cast<int64_t>(setting[i]);
    }
  }
  return j;
}

void write_json(const std::string& path, const std::vector<Finished>& finished) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& f : finished) {
    nlohmann::json c = to_json(f.result);
    c["kernel"] = f.item.kernel->name;
    c["entry_point"] = f.item.variant->entry_point;
    c["case"] = f.item.test->name;
    c["constants"] = constants_json(*f.item.kernel, f.item.constants);
    j.push_back(std::move(c));
  }
  support::write_file_atomically(path, j.dump(2) + "\n");
}

}  // namespace

int run_verify(const VerifyOptions& o, std::ostream& out, std::ostream& err) {
  support::Diagnostics diags;
  auto kernels = driver::load_specs(driver::collect_specs(o.inputs, diags), diags);
  fmt::print(err, "{}", diags.format_all());
  if (diags.has_errors()) return driver::kSpecErrors;
  std::vector<std::unique_ptr<SimModule>> modules;
  ModuleOptions module_options = o.module;
  module_options.race_instrumented = o.exact_races;
  for (const auto& k : kernels) {
    double start = monotonic_seconds();
    try {
      modules.push_back(std::make_unique<SimModule>(k, module_options));
    } catch (const std::exception& e) {
      fmt::print(err, "{}: error: {}\n", k.spec_path, e.what());
      return driver::kVerifyFailed;
    }
    if (!o.quiet) {
      fmt::print(out, "{}: simulator module{} {} ({:.1f} s)\n", k.name, o.exact_races ? " (race-instrumented)" : "",
                 modules.back()->was_cached() ? "cached" : "compiled", monotonic_seconds() - start);
    }
  }
  auto items = plan(kernels, modules, o);
  auto finished = run_all(items, o, out);
  print_summary(out, kernels, finished);
  if (!o.json_path.empty()) write_json(o.json_path, finished);
  size_t failed = std::count_if(finished.begin(), finished.end(),
                                [](const Finished& f) { return f.result.status != CaseStatus::pass; });
  fmt::print(out, "{} passed, {} failed\n", finished.size() - failed, failed);
  return failed ? driver::kVerifyFailed : driver::kOk;
}

}  // namespace mtlgen::verify
