#include "report/report.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <fstream>
#include <sstream>

#include "advisor/simulate.h"
#include "check_msl/checked_library.h"
#include "support/exit_code.h"
#include "support/templates.h"
#include "support/version.h"

namespace mtlgen::report {

namespace {

using Json = nlohmann::json;

// The roofline draws these chips' roofs (the table's extremes and the seeds' chip).
const std::vector<std::string> kRooflineChips = {"M1", "M3 Max", "M4 Max"};

Json chips_json() {
  Json out = Json::array();
  for (const auto& c : advisor::chips()) {
    out.push_back({{"name", c.name}, {"bandwidth_gbs", c.bandwidth_gbs}, {"gpu_cores", c.gpu_cores},
                   {"clock_ghz", c.clock_ghz}, {"peak_gflops", c.peak_gflops()}, {"launch_us", c.launch_us()},
                   {"latency_us", c.latency_us()}});
  }
  return out;
}

// JSON inside <script>: "</" would end the element early.
std::string script_safe(const std::string& json) {
  std::string out;
  for (size_t i = 0; i < json.size(); ++i) {
    out += json[i];
    if (json[i] == '<' && i + 1 < json.size() && json[i + 1] == '/') out += "\\";
  }
  return out;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string title_of(const std::vector<std::string>& inputs) {
  std::string title;
  for (const auto& i : inputs) title += (title.empty() ? "" : " ") + i;
  return title;
}

// Counts and analyses every kernel, then every family with its members' counters; false (with the
// errors printed) when one could not be counted: the page is written anyway, that kernel predicted
// from its spec alone.
bool analyse(const std::vector<ir::Kernel>& kernels, const ReportOptions& o, std::vector<advisor::KernelAdvice>& out,
             std::ostream& progress, std::ostream& err) {
  advisor::CountFn count =
      o.counters ? advisor::simulator_counter(o.module, o.timeout_seconds, kernels) : advisor::CountFn();
  bool counted = true;
  auto note = [&](const advisor::KernelAdvice& a) {
    if (!a.count_error.empty()) {
      fmt::print(err, "{}: error: counting {} failed: {}\n", a.kernel->spec_path, a.kernel->name, a.count_error);
      counted = false;
    }
    if (!o.quiet) fmt::print(progress, "{}: {} lint(s)\n", a.kernel->name, a.findings.size());
  };
  for (const auto& k : kernels) {
    out.push_back(k.is_family() ? advisor::KernelAdvice{} : advisor::advise(k, count));
    if (!k.is_family()) note(out.back());
  }
  const advisor::MemberCounters members = advisor::member_counters(out);
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (!kernels[i].is_family()) continue;
    out[i] = advisor::advise_family(kernels[i], members);
    note(out[i]);
  }
  return counted;
}

// Every --measured file, matched against the library (warnings printed); false, with
// "FILE: error: ..." printed, when a file cannot be read or is in neither format.
bool load_measured(const ReportOptions& o, const std::vector<ir::Kernel>& kernels, std::vector<MeasuredSet>& out,
                   std::ostream& err) {
  std::vector<MeasuredSet> all;
  for (const auto& file : o.measured) {
    try {
      for (auto& set : read_measured(file)) all.push_back(std::move(set));
    } catch (const MeasuredError& e) {
      fmt::print(err, "{}: error: {}\n", file.string(), e.what());
      return false;
    }
  }
  std::vector<std::string> warnings;
  out = match_library(std::move(all), kernels, warnings);
  for (const auto& w : warnings) fmt::print(err, "{}\n", w);
  return true;
}

}  // namespace

Json report_json(const std::vector<advisor::KernelAdvice>& advice, const std::vector<MeasuredSet>& measured) {
  Json j = {{"mtlgen", mtlgen::kVersion}, {"chips", chips_json()}, {"roofline_chips", kRooflineChips}};
  j["kernels"] = Json::array();
  for (const auto& a : advice) {
    Json k = advisor::to_json(a);
    k["measured"] = Json::array();
    for (const auto& m : measured)
      if (m.kernel == a.kernel->name) k["measured"].push_back(to_json(m));
    j["kernels"].push_back(std::move(k));
  }
  return j;
}

support::OutputSet render_report(const std::vector<advisor::KernelAdvice>& advice, const std::string& title,
                                 const std::string& chart_library, const std::vector<MeasuredSet>& measured) {
  const Json j = report_json(advice, measured);
  support::TemplateData data;
  data.set("title", title);
  data.set("version", mtlgen::kVersion);
  data.set("kernel_count", std::to_string(advice.size()));
  data.set("css", std::string(support::template_file("report/report.css")));
  data.set("chart_library_note", "Chart.js from Debian's libjs-chart.js (MIT), inlined so the page works offline");
  data.set("chart_library", chart_library);
  data.set("report_json", script_safe(j.dump()));
  data.set("page_script", std::string(support::template_file("report/report.js")));
  support::OutputSet files;
  files.add("index.html", support::render_template("report/report.html.mustache", data));
  files.add("report.json", j.dump(2) + "\n");
  return files;
}

int run_report(const ReportOptions& o, std::ostream& out, std::ostream& err) {
  support::Diagnostics diags;
  auto kernels = check_msl::load_library(o.inputs, diags, o.include_dirs);
  fmt::print(err, "{}", diags.format_all());
  if (diags.has_errors()) return support::kSpecErrors;
  const std::string chart_library = read_file(o.chart_library);
  if (chart_library.empty()) {
    fmt::print(err, "{}: error: cannot read the charting library\n  hint: apt-get install libjs-chart.js\n",
               o.chart_library.string());
    return support::kIoError;
  }
  std::vector<MeasuredSet> measured;
  if (!load_measured(o, kernels, measured, err)) return support::kIoError;
  std::vector<advisor::KernelAdvice> advice;
  const bool counted = analyse(kernels, o, advice, out, err);
  try {
    support::write_outputs(render_report(advice, title_of(o.inputs), chart_library, measured), o.out_dir);
  } catch (const std::exception& e) {
    fmt::print(err, "{}: error: {}\n", o.out_dir.string(), e.what());
    return support::kIoError;
  }
  size_t findings = 0;
  for (const auto& a : advice) findings += a.findings.size();
  for (const auto& a : advice) {
    for (const auto& f : a.findings) fmt::print(err, "{}\n", f.text());
  }
  if (!o.quiet) fmt::print(out, "{} kernels, {} lint(s) -> {}\n", advice.size(), findings, (o.out_dir / "index.html").string());
  return counted ? support::kOk : support::kVerifyFailed;
}

}  // namespace mtlgen::report
