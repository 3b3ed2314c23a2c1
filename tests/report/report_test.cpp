// The report writer: index.html and report.json from the advisor's analysis (page_test.sh loads
// the page in a headless browser), and the done-when run over the whole shipped library: every
// kernel's cost model agrees with the simulator's counters.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "report/report.h"
#include "spec/library.h"
#include "support/templates.h"

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

std::string fixture(const std::string& name) { return std::string(MTLGEN_SOURCE_DIR) + "/tests/report/measured/" + name; }

// A report of specs/argmax.yaml without counters, with these --measured fixtures.
ReportOptions argmax_report(const std::string& dir, const std::vector<std::string>& measured) {
  ReportOptions o;
  o.inputs = {std::string(MTLGEN_SOURCE_DIR) + "/specs/argmax.yaml"};
  o.out_dir = std::string(MTLGEN_BINARY_DIR) + "/" + dir;
  std::filesystem::remove_all(o.out_dir);
  o.chart_library = std::string(MTLGEN_SOURCE_DIR) + "/tests/report/CMakeLists.txt";  // any readable text
  o.counters = false;
  o.quiet = true;
  for (const auto& m : measured) o.measured.push_back(fixture(m));
  return o;
}

// The fixture is written as autotune_<kernel> writes its file: these keys, this format name.
TEST(Measured, TheMacFixtureHasTheKeysTheGeneratedAutotuneProgramWrites) {
  const std::string_view harness = support::template_file("objc/harness_support.mm.mustache");
  for (const char* key : {"@\"format\"] = @\"mtlgen-tuning-1\"", "@\"devices\"", "@\"entry_point\" :",
                          "@\"median_us\" :", "@\"dims\" :"})
    EXPECT_NE(harness.find(key), std::string_view::npos) << key;
  const nlohmann::json doc = nlohmann::json::parse(file_text(fixture("m3max_tuning.json")));
  const auto& entry = doc["devices"]["Apple M3 Max"]["argmax"]["T=float"];
  for (const char* key : {"dims", "entry_point", "gbps", "median_us", "tuning"}) EXPECT_TRUE(entry.contains(key)) << key;
}

TEST(Measured, TheMacTuningFileIsOneSetPerDeviceAndKernelLabelledWithTheDevice) {
  const auto sets = read_measured(fixture("m3max_tuning.json"));
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_EQ(sets[0].kernel, "argmax");
  EXPECT_EQ(sets[0].label, "measured: Apple M3 Max");
  EXPECT_EQ(sets[0].dims["n"], 151936);
  ASSERT_EQ(sets[0].points.size(), 2u);
  EXPECT_EQ(sets[0].points[0].entry_point, "argmax_f32_tg1024");
  EXPECT_DOUBLE_EQ(sets[0].points[0].median_us, 45);
}

TEST(Measured, TheCudaBenchFileIsLabelledARelativeGuideAndSkipsFailedPoints) {
  const auto sets = read_measured(fixture("h200_bench.json"));
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_EQ(sets[0].label, "measured: NVIDIA H200 (CUDA, relative guide only)");
  EXPECT_EQ(sets[0].case_name, "vocab_151936");
  ASSERT_EQ(sets[0].points.size(), 6u);  // the f16 point that failed has no time
  EXPECT_DOUBLE_EQ(sets[0].points.back().median_us, 68.0);
}

TEST(Run, MeasuredSetsGoToTheirKernelInReportJsonAndThePage) {
  ReportOptions o = argmax_report("report-measured", {"m3max_tuning.json", "h200_bench.json"});
  std::ostringstream out, err;
  ASSERT_EQ(run_report(o, out, err), 0) << err.str();
  EXPECT_EQ(err.str().find("measured"), std::string::npos) << err.str();
  const nlohmann::json j = nlohmann::json::parse(file_text(o.out_dir / "report.json"));
  const auto& measured = j["kernels"][0]["measured"];
  ASSERT_EQ(measured.size(), 2u);
  EXPECT_EQ(measured[0]["label"], "measured: Apple M3 Max");
  EXPECT_EQ(measured[1]["label"], "measured: NVIDIA H200 (CUDA, relative guide only)");
  EXPECT_EQ(measured[1]["case"], "vocab_151936");
  EXPECT_EQ(measured[1]["points"].size(), 6u);
  EXPECT_NE(file_text(o.out_dir / "index.html").find("\"label\":\"measured: Apple M3 Max\""), std::string::npos);
}

// The model ranks argmax's tune points as the H200 sweep measured them (bench --gpu cuda,
// tests/report/measured/h200_bench.json): every pair measured more than 10% apart, on every chip.
TEST(Measured, PredictionsRankTheArgmaxSweepAsTheH200Does) {
  ReportOptions o = argmax_report("report-measured-ranking", {"h200_bench.json"});
  std::ostringstream out, err;
  ASSERT_EQ(run_report(o, out, err), 0) << err.str();
  const nlohmann::json kernel = nlohmann::json::parse(file_text(o.out_dir / "report.json"))["kernels"][0];
  std::map<std::string, const nlohmann::json*> predicted;  // by entry point
  for (const auto& p : kernel["points"]) predicted[p["entry_point"]] = &p["predictions"];
  const auto& measured = kernel["measured"][0]["points"];
  size_t pairs = 0;
  for (const auto& a : measured) {
    for (const auto& b : measured) {
      if (a["median_us"].get<double>() * 1.1 > b["median_us"].get<double>()) continue;
      ++pairs;
      for (size_t chip = 0; chip < advisor::chips().size(); ++chip) {
        EXPECT_LT((*predicted.at(a["entry_point"]))[chip]["time_us"].get<double>(),
                  (*predicted.at(b["entry_point"]))[chip]["time_us"].get<double>())
            << a["entry_point"] << " against " << b["entry_point"] << " on " << advisor::chips()[chip].name;
      }
    }
  }
  EXPECT_EQ(pairs, 15u);  // six tune points, each pair 2x apart
}

// bench --gpu cuda --json on families (the H200 runs of argmax_two_stage and decode_layer, their
// family results copied as written): each family time with its dispatches' times in order.
TEST(Measured, AFamilysBenchResultCarriesEachDispatchsTime) {
  const auto sets = read_measured(fixture("h200_family_bench.json"));
  ASSERT_EQ(sets.size(), 3u);  // argmax_two_stage at one case, decode_layer at two
  EXPECT_EQ(sets[0].kernel, "argmax_two_stage");
  ASSERT_EQ(sets[0].points[0].members.size(), 2u);
  EXPECT_EQ(sets[0].points[0].members[1].kernel, "argmax_merge");
  EXPECT_DOUBLE_EQ(sets[0].points[0].members[1].median_us, 4.832);
  EXPECT_EQ(sets[1].kernel, "decode_layer");
  EXPECT_EQ(sets[1].case_name, "qwen3_1p7b_ctx1");
  const MeasuredPoint& bf16 = sets[1].points[2];
  EXPECT_EQ(bf16.entry_point, "decode_layer_bf16");
  EXPECT_DOUBLE_EQ(bf16.median_us, 122.592);
  ASSERT_EQ(bf16.members.size(), 10u);
  EXPECT_EQ(bf16.members[0].dispatch, 1);
  EXPECT_EQ(bf16.members[0].kernel, "decode_layer_norm_matvec");
  EXPECT_DOUBLE_EQ(bf16.members[0].median_us, 21.888);
  // The output and the down projection: one member at dispatches 7 and 10.
  EXPECT_EQ(bf16.members[6].kernel, "decode_layer_matvec_residual");
  EXPECT_EQ(bf16.members[9].kernel, "decode_layer_matvec_residual");
  EXPECT_EQ(bf16.members[9].dispatch, 10);
  EXPECT_DOUBLE_EQ(bf16.members[9].median_us, 24.8);
  const nlohmann::json j = to_json(sets[1]);
  EXPECT_EQ(j["points"][2]["members"][9]["median_us"], 24.8);
  EXPECT_FALSE(to_json(read_measured(fixture("h200_bench.json"))[0])["points"][0].contains("members"));
}

TEST(Measured, AMemberWithoutATimeIsAnErrorNamingIt) {
  const nlohmann::json doc = nlohmann::json::parse(R"({"gpu": "NVIDIA H200", "results": [{"kernel": "argmax_two_stage",
      "case": "c", "entry_point": "argmax_two_stage_f32", "median_us": 12.1,
      "members": [{"dispatch": 1, "kernel": "argmax_blocks", "median_us": 6.8}, {"dispatch": 2, "kernel": "argmax_merge"}]}]})");
  try {
    parse_measured(doc, "x.json");
    ADD_FAILURE() << "no error";
  } catch (const MeasuredError& e) {
    EXPECT_STREQ(e.what(), "results[0].members[1]: `median_us` must be a number");
  }
}

// Members that are not the family's dispatches in order (another spec's run) are dropped with a
// warning; the family's own time stays.
TEST(Measured, MembersThatAreNotTheFamilysDispatchesAreAWarning) {
  const auto kernels = load({"specs/argmax_two_stage.yaml"});
  const nlohmann::json doc = nlohmann::json::parse(R"({"gpu": "NVIDIA H200", "results": [{"kernel": "argmax_two_stage",
      "case": "c", "entry_point": "argmax_two_stage_f32", "median_us": 12.1,
      "members": [{"dispatch": 1, "kernel": "argmax_merge", "median_us": 6.8}, {"dispatch": 2, "kernel": "argmax_blocks", "median_us": 4.8}]}]})");
  std::vector<std::string> warnings;
  const auto sets = match_library(parse_measured(doc, "x.json"), kernels, warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("x.json: warning: the members of `argmax_two_stage_f32`"), std::string::npos) << warnings[0];
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_TRUE(sets[0].points[0].members.empty());
  EXPECT_DOUBLE_EQ(sets[0].points[0].median_us, 12.1);
}

// A family's report.json entry: its predicted split per case and type, and the measured split
// beside it under `measured` (the page pairs them by case and entry point).
TEST(Run, AFamilysPredictedSplitAndMeasuredSplitAreInReportJson) {
  ReportOptions o = argmax_report("report-family", {"h200_family_bench.json"});
  o.inputs = {std::string(MTLGEN_SOURCE_DIR) + "/specs/argmax_two_stage.yaml"};
  std::ostringstream out, err;
  ASSERT_EQ(run_report(o, out, err), 0) << err.str();
  const nlohmann::json j = nlohmann::json::parse(file_text(o.out_dir / "report.json"));
  const nlohmann::json* family = nullptr;
  for (const auto& k : j["kernels"]) family = k["kernel"] == "argmax_two_stage" ? &k : family;
  ASSERT_NE(family, nullptr);
  const auto& point = (*family)["family"][0];
  EXPECT_EQ(point["case"]["name"], "vocab_151936");
  EXPECT_EQ(point["entry_point"], "argmax_two_stage_f32");
  ASSERT_EQ(point["dispatches"].size(), 2u);
  EXPECT_EQ(point["dispatches"][1]["kernel"], "argmax_merge");
  EXPECT_EQ(point["dispatches"][1]["dims"]["blocks"], 149);
  EXPECT_EQ(point["total"].size(), advisor::chips().size());
  const auto& measured = (*family)["measured"][0];
  EXPECT_EQ(measured["case"], "vocab_151936");
  EXPECT_EQ(measured["points"][0]["members"].size(), 2u);
}

TEST(Run, AnEntryTheLibraryLacksIsAWarningNamingTheFileAndEntry) {
  ReportOptions o = argmax_report("report-measured-unknown", {"unknown_entries.json"});
  std::ostringstream out, err;
  ASSERT_EQ(run_report(o, out, err), 0) << err.str();
  const std::string file = fixture("unknown_entries.json");
  EXPECT_NE(err.str().find(file + ": warning: kernel `no_such_kernel` (measured: Apple M4 Max) is not in the library"),
            std::string::npos) << err.str();
  EXPECT_NE(err.str().find(file + ": warning: kernel `argmax` has no variant `argmax_f32_tg4096`"), std::string::npos)
      << err.str();
  const nlohmann::json j = nlohmann::json::parse(file_text(o.out_dir / "report.json"));
  EXPECT_TRUE(j["kernels"][0]["measured"].empty());
}

TEST(Run, AMalformedMeasuredFileIsAnIoErrorNamingItAndNoPageIsWritten) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"wrong_type.json", "error: results[0]: `median_us` must be a number"},
      {"truncated.json", "error: not JSON"},
      {"no_such_file.json", "error: cannot read the file"},
      {"../CMakeLists.txt", "error: not JSON"}};
  for (const auto& [name, message] : cases) {
    ReportOptions o = argmax_report("report-measured-malformed", {name});
    std::ostringstream out, err;
    EXPECT_EQ(run_report(o, out, err), 3) << name;
    EXPECT_NE(err.str().find(fixture(name) + ": " + message), std::string::npos) << err.str();
    EXPECT_FALSE(std::filesystem::exists(o.out_dir / "index.html")) << name;
  }
  const nlohmann::json neither = {{"devices", nlohmann::json::object()}};
  EXPECT_THROW(parse_measured(neither, "x.json"), MeasuredError);  // a tuning file without its format
}

// A family in report.json: predicted at a case at least, each point's total per chip the sum of its
// dispatches, every dispatch of a member the report counted (its own analysis) with its counters.
void family_sums_its_dispatches(const nlohmann::json& k) {
  ASSERT_FALSE(k["family"].empty()) << k["kernel"];
  for (const auto& p : k["family"]) {
    for (size_t chip = 0; chip < p["total"].size(); ++chip) {
      double sum = 0;
      for (const auto& d : p["dispatches"]) {
        sum += d["predictions"][chip]["time_us"].get<double>();
        EXPECT_TRUE(d["counted"].get<bool>()) << k["kernel"] << " dispatch " << d["dispatch"];
      }
      EXPECT_NEAR(p["total"][chip]["time_us"].get<double>(), sum, 1e-9 * sum) << k["kernel"] << " " << p["entry_point"];
    }
  }
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
  size_t checked = 0, families = 0;
  for (const auto& k : j["kernels"]) {
    if (k.contains("skipped")) continue;
    if (k.contains("family")) {
      ++families;
      family_sums_its_dispatches(k);
      continue;
    }
    EXPECT_FALSE(k["counters"].is_null()) << k["kernel"] << ": " << k.value("count_error", "");
    for (const auto& c : k["cost"]) {
      if (c["declared"].is_null()) continue;
      ++checked;
      EXPECT_TRUE(c["agrees"].get<bool>()) << k["kernel"] << ": " << c["message"];
    }
    // The matvecs' one-simdgroup tune points are their design; no shipped kernel reads a table per lane.
    for (const auto& f : k["findings"]) {
      const std::string lint = f["lint"], kernel = k["kernel"];
      EXPECT_FALSE(lint == "reduction-one-simdgroup" && kernel.find("matvec") != std::string::npos) << f["text"];
      EXPECT_NE(lint, "constant-table") << f["text"];
    }
  }
  EXPECT_GT(checked, 60u);
  EXPECT_GE(families, 4u);  // argmax_two_stage, decode_layer, decode_token, sdpa_vector_2pass
  // The nvfp4 matvec's widest load is a vec<float, 4> of x, and each simdgroup re-reads x for its
  // rows: the terms calibration_test.cpp gives its seeds.
  for (const auto& k : j["kernels"]) {
    if (k["kernel"] != "nvfp4_matvec") continue;
    EXPECT_EQ(k["counters"]["widest_load_bytes"], 16.0);
    EXPECT_GT(k["counters"]["loaded_per_unique_byte"].get<double>(), 1.5);
  }
}

}  // namespace
}  // namespace mtlgen::report
