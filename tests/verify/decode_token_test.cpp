// Bugs planted in the members of specs/decode_token.yaml are caught by the family's own cases, as
// decode_layer_test.cpp does for the layer, but cheaper: each copy of the spec keeps one type (float)
// and the run keeps only the family's entries of the report. The unchanged copy passes the same run,
// so a catch is the bug's doing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "verify/verify.h"

namespace fs = std::filesystem;
using namespace mtlgen;

namespace {

const char* const kSpec = "specs/decode_token.yaml";

std::string read_spec() {
  std::ifstream in(kSpec);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Replaces `from`, which must occur exactly once in `text`, by `to`.
void replace_once(std::string& text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "the spec no longer holds `" << from << "`";
  EXPECT_EQ(text.find(from, at + 1), std::string::npos) << "`" << from << "` occurs more than once";
  if (at != std::string::npos) text.replace(at, from.size(), to);
}

// The spec at float only, with `from` replaced by `to`, written under a temporary directory named
// after the bug.
fs::path planted(const std::string& bug, const std::string& from, const std::string& to) {
  std::string text = read_spec();
  replace_once(text, "  T: [float, half, bfloat]\n", "  T: [float]\n");
  replace_once(text, from, to);
  const fs::path dir = fs::temp_directory_path() / ("mtlgen-decode-token-" + bug);
  fs::create_directories(dir);
  const fs::path spec = dir / "decode_token.yaml";
  std::ofstream(spec) << text;
  return spec;
}

struct FamilyRun {
  std::string printed;
  std::vector<nlohmann::json> family_cases;  // the family's entries of the JSON report, one per case
};

FamilyRun verify_spec(const fs::path& spec) {
  verify::VerifyOptions o;
  o.inputs = {spec.string()};
  o.module.cache_dir = MTLGEN_TEST_CACHE_DIR;
  o.result_cache = false;
  o.quiet = true;
  o.json_path = (spec.parent_path() / "results.json").string();
  fs::remove(o.json_path);
  std::ostringstream out, err;
  verify::run_verify(o, out, err);
  FamilyRun run{out.str() + err.str(), {}};
  std::ifstream json(o.json_path);
  if (!json) return run;
  for (const auto& c : nlohmann::json::parse(json)) {
    if (c.at("kernel") == "decode_token") run.family_cases.push_back(c);
  }
  return run;
}

// At least one family case fails, and every failure is a mismatch of the token with the family's
// reference (no crash, no other checker).
void expect_caught(const fs::path& spec) {
  const FamilyRun run = verify_spec(spec);
  ASSERT_EQ(run.family_cases.size(), 3u) << run.printed;  // float x 3 CI cases
  size_t failed = 0;
  for (const auto& c : run.family_cases) {
    if (c.at("status") == "PASS") continue;
    ++failed;
    EXPECT_EQ(c.at("status"), "FAIL") << c.dump();
    for (const auto& p : c.at("problems")) EXPECT_EQ(p.at("checker"), "mismatch") << c.dump();
  }
  EXPECT_GT(failed, 0u) << spec << ": no family case caught the planted bug\n" << run.printed;
}

TEST(DecodeToken, FamilyCasesPassUnchanged) {
  const FamilyRun run = verify_spec(planted("unchanged", "name: decode_token\n", "name: decode_token\n"));
  ASSERT_EQ(run.family_cases.size(), 3u) << run.printed;
  for (const auto& c : run.family_cases) EXPECT_EQ(c.at("status"), "PASS") << c.dump();
}

// The merge leaves out the last block (max_in_last_row_h66 puts the largest logit there).
TEST(DecodeToken, CatchesAnOffByOneInTheArgmaxMerge) {
  expect_caught(planted("merge_off_by_one", "for (uint b = local_index; b < blocks; b += TG) {",
                        "for (uint b = local_index; b + 1 < blocks; b += TG) {"));
}

// The lm_head reads x as it came (no norm, no weight). Leaving out only 1 / rms would not show: a
// positive scale of every logit keeps the token.
TEST(DecodeToken, CatchesASkippedNorm) {
  expect_caught(
      planted("skipped_norm", "{\n        out[i] = T(float(x[i]) * norm * float(w[i]));", "{\n        out[i] = x[i];"));
}

// The lm_head's rows one 4-element vector too close together (every read still inside the matrix and
// aligned).
TEST(DecodeToken, CatchesAWrongRowStride) {
  expect_caught(planted("row_stride", "w_rows[r] = w + size_t(min(row0 + r, rows - 1)) * cols;",
                        "w_rows[r] = w + size_t(min(row0 + r, rows - 1)) * (cols - 4);"));
}

}  // namespace
