// Every checker against a kernel with the bug it exists to catch (tests/verify/bugs/, whose
// first line says `# expect: <checker>`), and against a correct twin it must pass
// (tests/verify/twins/, same name).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/driver.h"
#include "verify/verify.h"

namespace fs = std::filesystem;
using namespace mtlgen;

namespace {

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator("tests/verify/bugs")) out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string expected_checker(const fs::path& spec) {
  std::ifstream in(spec);
  std::string line;
  std::getline(in, line);
  const std::string tag = "# expect: ";
  return line.rfind(tag, 0) == 0 ? line.substr(tag.size()) : "";
}

struct VerifyRun {
  int exit_code;
  nlohmann::json results;
  std::string printed;
};

VerifyRun verify(const fs::path& spec) {
  verify::VerifyOptions o;
  o.inputs = {spec.string()};
  o.timeout_seconds = 5;  // the endless-loop bug must be cut off quickly
  o.module.cache_dir = MTLGEN_TEST_CACHE_DIR;
  o.json_path = (fs::temp_directory_path() /
                 ("mtlgen-verify-" + spec.parent_path().filename().string() + "-" + spec.stem().string() + ".json"))
                    .string();
  fs::remove(o.json_path);
  std::ostringstream out, err;
  int rc = verify::run_verify(o, out, err);
  std::ifstream json(o.json_path);
  nlohmann::json results = json ? nlohmann::json::parse(json) : nlohmann::json::array();
  return {rc, results, out.str() + err.str()};
}

class PlantedBug : public ::testing::TestWithParam<std::string> {};

TEST_P(PlantedBug, IsCaughtByItsChecker) {
  fs::path spec = fs::path("tests/verify/bugs") / (GetParam() + ".yaml");
  std::string checker = expected_checker(spec);
  ASSERT_FALSE(checker.empty()) << spec << " lacks `# expect: <checker>`";
  VerifyRun run = verify(spec);
  EXPECT_EQ(run.exit_code, driver::kVerifyFailed) << run.printed;
  bool caught = false;
  for (const auto& c : run.results) {
    for (const auto& p : c.at("problems")) {
      caught = caught || p.at("checker") == checker;
      EXPECT_GT(p.at("message").get<std::string>().size(), 40u) << "messages must say what happened and what to do";
    }
  }
  EXPECT_TRUE(caught) << "expected a `" << checker << "` report:\n" << run.printed;
}

TEST_P(PlantedBug, CorrectTwinPasses) {
  fs::path spec = fs::path("tests/verify/twins") / (GetParam() + ".yaml");
  VerifyRun run = verify(spec);
  EXPECT_EQ(run.exit_code, driver::kOk) << run.printed;
  ASSERT_FALSE(run.results.empty());
  for (const auto& c : run.results) EXPECT_EQ(c.at("status"), "PASS") << run.printed;
}

INSTANTIATE_TEST_SUITE_P(Checkers, PlantedBug, ::testing::ValuesIn(names()),
                         [](const auto& info) { return info.param; });

}  // namespace
