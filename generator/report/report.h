#pragma once
// `mtlgen report <specs> -o DIR`: the advisor's analysis of a library written as one HTML page
// (index.html: per kernel the roofline, the predicted tune-point sweep, bytes per element,
// coalescing per access site, the lints; Chart.js inlined from Debian's libjs-chart.js, so the
// page works offline) and report.json beside it.
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "advisor/advisor.h"
#include "report/measured.h"
#include "support/output_set.h"
#include "verify/sim_module.h"

namespace mtlgen::report {

inline constexpr const char* kChartLibrary = "/usr/share/javascript/chart.js/chart.min.js";

struct ReportOptions {
  std::vector<std::string> inputs;  // spec files or directories
  std::vector<std::string> include_dirs;  // -I: for the #includes of `source:` kernels
  std::filesystem::path out_dir;
  std::filesystem::path chart_library = kChartLibrary;
  bool counters = true;  // false: predictions from the specs alone (no simulator run)
  double timeout_seconds = 120;
  bool quiet = false;
  std::vector<std::filesystem::path> measured;  // --measured: times to plot beside the predictions
  verify::ModuleOptions module;
};

// The whole library's JSON (report.json): chips, then one entry per kernel (advisor::to_json), with
// the measured sets of that kernel under `measured`.
nlohmann::json report_json(const std::vector<advisor::KernelAdvice>& advice, const std::vector<MeasuredSet>& measured = {});
// index.html and report.json; `chart_library` is the text of Chart.js.
support::OutputSet render_report(const std::vector<advisor::KernelAdvice>& advice, const std::string& title,
                                 const std::string& chart_library, const std::vector<MeasuredSet>& measured = {});

// Returns a support::ExitCode: 0, 1 spec errors, 3 the chart library, a --measured file or the
// output could not be read or written (a measured entry the library lacks is only a warning), 4 a kernel could not be counted (its case failed in the simulator; the page is
// written anyway, that kernel predicted from its spec alone).
int run_report(const ReportOptions& options, std::ostream& out, std::ostream& err);

}  // namespace mtlgen::report
