// Bugs planted in the members of specs/decode_layer.yaml are caught by the family's own cases: each
// test copies the spec at one type (float) with one member's body changed, verifies it, and expects a
// family case to find the layer's output (or the cache it writes) differing from the layer's
// reference (the member's own cases run too but are not what is checked). The unchanged copy passes
// the same run, so a catch is the bug's doing.
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

const char* const kSpec = "specs/decode_layer.yaml";

std::string read_spec() {
  std::ifstream in(kSpec);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The spec at float only, with `from` (which must occur exactly once) replaced by `to`, written
// under a temporary directory named after the bug.
fs::path planted(const std::string& bug, const std::string& from, const std::string& to) {
  std::string text = read_spec();
  // One type: the bugs are in the indexing, not the arithmetic, and every type's modules cost a compile.
  const std::string types = "  T: [float, half, bfloat]\n";
  EXPECT_NE(text.find(types), std::string::npos) << "the spec's types changed";
  if (text.find(types) != std::string::npos) text.replace(text.find(types), types.size(), "  T: [float]\n");
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "the spec no longer holds `" << from << "`";
  EXPECT_EQ(text.find(from, at + 1), std::string::npos) << "`" << from << "` occurs more than once";
  if (at != std::string::npos) text.replace(at, from.size(), to);
  const fs::path dir = fs::temp_directory_path() / ("mtlgen-decode-layer-" + bug);
  fs::create_directories(dir);
  const fs::path spec = dir / "decode_layer.yaml";
  std::ofstream(spec) << text;
  return spec;
}

struct FamilyRun {
  std::string printed;
  std::vector<nlohmann::json> family_cases;  // the family's entries of the JSON report, one per (type, case)
};

// One run of every case of the spec (the members' own cases are cheap); only the family's are kept.
FamilyRun verify_spec(const fs::path& spec) {
  verify::VerifyOptions o;
  o.inputs = {spec.string()};
  o.module.cache_dir = MTLGEN_TEST_CACHE_DIR;
  o.result_cache = false;
  o.json_path = (spec.parent_path() / "results.json").string();
  fs::remove(o.json_path);
  std::ostringstream out, err;
  verify::run_verify(o, out, err);
  FamilyRun run{out.str() + err.str(), {}};
  std::ifstream json(o.json_path);
  if (!json) return run;
  for (const auto& c : nlohmann::json::parse(json)) {
    if (c.at("kernel") == "decode_layer") run.family_cases.push_back(c);
  }
  return run;
}

// At least one family case fails, and every failure is a mismatch of the layer's outputs with the
// layer's reference (no crash, no other checker).
void expect_caught(const fs::path& spec) {
  const FamilyRun run = verify_spec(spec);
  ASSERT_EQ(run.family_cases.size(), 3u) << run.printed;  // 3 CI cases
  size_t failed = 0;
  for (const auto& c : run.family_cases) {
    if (c.at("status") == "PASS") continue;
    ++failed;
    EXPECT_EQ(c.at("status"), "FAIL") << c.dump();
    for (const auto& p : c.at("problems")) EXPECT_EQ(p.at("checker"), "mismatch") << c.dump();
  }
  EXPECT_GT(failed, 0u) << spec << ": no family case caught the planted bug\n" << run.printed;
}

TEST(DecodeLayer, FamilyCasesPassUnchanged) {
  const FamilyRun run = verify_spec(planted("unchanged", "name: decode_layer\n", "name: decode_layer\n"));
  ASSERT_EQ(run.family_cases.size(), 3u) << run.printed;
  for (const auto& c : run.family_cases) EXPECT_EQ(c.at("status"), "PASS") << c.dump();
}

TEST(DecodeLayer, CatchesAWrongHeadStride) {
  expect_caught(planted("head_stride", "k_cache + size_t(kv_head) * capacity * head_dim;",
                        "k_cache + size_t(kv_head) * kv_len * head_dim;"));
}

// The output and down projections forget the residual stream.
TEST(DecodeLayer, CatchesAMissingResidual) {
  expect_caught(planted("missing_residual", "float sum = float(residual[row0 + local_index]);", "float sum = 0.0f;"));
}

// q_norm / k_norm applies its weight but not the norm.
TEST(DecodeLayer, CatchesASkippedHeadNorm) {
  expect_caught(planted("skipped_head_norm", "out_row[i] = T(float(x_row[i]) * norm * float(weight[i]));",
                        "out_row[i] = T(float(x_row[i]) * float(weight[i]));"));
}

// The cache update stores the query's first heads as keys (k_first ignored).
TEST(DecodeLayer, CatchesKeysReadAtTheQueryHeads) {
  expect_caught(planted("key_offset", "k_cache[dst] = k_src[size_t(k_first) * head_dim + gid];",
                        "k_cache[dst] = k_src[gid];"));
}

}  // namespace
