// A test case that violates a precondition over tunables is skipped, visibly, on exactly the
// variants whose tuning excludes it (tests/verify/skips/capacity.yaml), and run on the others; a
// benchmark case is not run unless asked for (tests/verify/skips/benchmark.yaml).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "spec/library.h"
#include "support/exit_code.h"
#include "verify/verify.h"

namespace fs = std::filesystem;
using namespace mtlgen;

namespace precondition_skip_test {  // named: unity builds (tests/CMakeLists.txt)

struct VerifyRun {
  int exit_code;
  nlohmann::json results;
  std::string out, err;
};

VerifyRun verify_spec(const std::string& spec, bool all_variants, const std::string& case_filter = "") {
  verify::VerifyOptions o;
  o.inputs = {"tests/verify/skips/" + spec + ".yaml"};
  o.variants = all_variants ? ir::VariantSelection::all : ir::VariantSelection::defaults;
  o.case_filter = case_filter;
  o.module.cache_dir = MTLGEN_TEST_CACHE_DIR;
  o.result_cache = false;  // every case runs: these tests are about what running finds
  o.json_path = (fs::temp_directory_path() / ("mtlgen-verify-skips-" + spec + (all_variants ? "-all" : "-default") +
                                              case_filter + ".json")).string();
  fs::remove(o.json_path);
  std::ostringstream out, err;
  int rc = verify::run_verify(o, out, err);
  std::ifstream json(o.json_path);
  return {rc, json ? nlohmann::json::parse(json) : nlohmann::json::array(), out.str(), err.str()};
}

TEST(PreconditionSkip, SkipsExactlyTheVariantsWhoseTuningExcludesTheCase) {
  VerifyRun run = verify_spec("capacity", true);
  EXPECT_EQ(run.exit_code, support::kOk) << run.out << run.err;
  ASSERT_EQ(run.results.size(), 4u) << run.out;  // 2 variants x 2 cases, skipped ones included
  for (const auto& c : run.results) {
    bool excluded = c.at("case") == "needs_tg64" && c.at("entry_point") == "capacity_tg32";
    EXPECT_EQ(c.at("status"), excluded ? "SKIP" : "PASS") << c.dump();
    EXPECT_EQ(c.contains("skip_reason"), excluded) << c.dump();
    if (excluded) {
      EXPECT_EQ(c.at("skip_reason"), "a row holds at most 2 * TG elements at TG=32");
    }
  }
  EXPECT_NE(run.out.find("SKIP  capacity_tg32 needs_tg64: skipped: a row holds at most 2 * TG elements at TG=32"),
            std::string::npos) << run.out;
  EXPECT_NE(run.out.find("3 passed, 0 failed, 1 skipped"), std::string::npos) << run.out;
  EXPECT_EQ(run.err.find("warning"), std::string::npos) << run.err;  // every case ran somewhere
}

// Under --variant default each case runs on the variant a caller naming no tuning gets
// (tuning_serving): the default TG=32 where it serves the case, TG=64 for needs_tg64, so every case
// runs and none is skipped or warned about.
TEST(PreconditionSkip, DefaultRunsEachCaseOnTheVariantThatServesIt) {
  VerifyRun run = verify_spec("capacity", false);
  EXPECT_EQ(run.exit_code, support::kOk) << run.out << run.err;
  ASSERT_EQ(run.results.size(), 2u) << run.out;
  for (const auto& c : run.results) {
    EXPECT_EQ(c.at("status"), "PASS") << c.dump();
    EXPECT_EQ(c.at("entry_point"), c.at("case") == "needs_tg64" ? "capacity_tg64" : "capacity_tg32") << c.dump();
  }
  EXPECT_NE(run.out.find(", 0 failed, 0 skipped"), std::string::npos) << run.out;
  EXPECT_EQ(run.err.find("warning"), std::string::npos) << run.err;
}

// A benchmark case is checked like any other but not run, unless --case names it.
TEST(BenchmarkCase, RunsOnlyWhenCaseNamesIt) {
  VerifyRun run = verify_spec("benchmark", true);
  EXPECT_EQ(run.exit_code, support::kOk) << run.out << run.err;
  ASSERT_EQ(run.results.size(), 1u) << run.out;
  EXPECT_EQ(run.results[0].at("case"), "small");
  EXPECT_EQ(run.out.find("full_size"), std::string::npos) << run.out;

  VerifyRun asked = verify_spec("benchmark", true, "full_size");
  EXPECT_EQ(asked.exit_code, support::kOk) << asked.out << asked.err;
  ASSERT_EQ(asked.results.size(), 1u) << asked.out;
  EXPECT_EQ(asked.results[0].at("case"), "full_size");
  EXPECT_EQ(asked.results[0].at("status"), "PASS");
}

}  // namespace precondition_skip_test
