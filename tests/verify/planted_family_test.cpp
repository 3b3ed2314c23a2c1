// Bugs planted in the members of a kernel family (specs/decode_layer.yaml, specs/decode_token.yaml,
// and in specs/decode_layer_q4_0.yaml's dispatches and borrowed kernels) are caught by the family's
// own cases: each test copies the spec at one type (float: the bugs are in
// the indexing, not the arithmetic, and every type's modules cost a compile) with one member's body
// changed, verifies it, and expects a family case to find the family's outputs differing from its
// reference (the members' own cases run too but are not what is checked). The unchanged copy passes
// the same run, so a catch is the bug's doing.
// Bugs planted in the decoding of the quantized matvecs (q4_1, q5_0, MLX affine at 3/5/6 bits) are
// copied the same way and caught by the spec's own cases, whose mismatches name the line that
// stores y; the unchanged specs pass verify_shipped_specs_each_variant_exact_races.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <vector>

#include "verify/verify.h"

namespace fs = std::filesystem;
using namespace mtlgen;

namespace {

// Replaces `from`, which must occur exactly once in `text`, by `to`.
void replace_once(std::string& text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "the spec no longer holds `" << from << "`";
  EXPECT_EQ(text.find(from, at + 1), std::string::npos) << "`" << from << "` occurs more than once";
  if (at != std::string::npos) text.replace(at, from.size(), to);
}

std::string read_spec(const std::string& name) {
  std::ifstream in("specs/" + name + ".yaml");
  std::stringstream read;
  read << in.rdbuf();
  return read.str();
}

// The files `text` includes (`reference_include: file`), copied beside it unchanged.
void copy_included(const std::string& text, const fs::path& dir) {
  static const std::regex include(R"(\nreference_include: ([A-Za-z0-9_.-]+)\n)");
  for (std::sregex_iterator it(text.begin(), text.end(), include), end; it != end; ++it) {
    fs::copy_file(fs::path("specs") / (*it)[1].str(), dir / (*it)[1].str(), fs::copy_options::overwrite_existing);
  }
}

// The specs `text` borrows kernels from (`{spec: file.yaml}`), copied beside it unchanged but for
// `borrowed_bug` (file name, from, to), with the files they include, so the copy resolves them as
// the original does.
struct BorrowedBug {
  std::string spec, from, to;
};

void copy_borrowed(const std::string& text, const fs::path& dir, const BorrowedBug& bug) {
  static const std::regex borrow(R"(\{spec: ([A-Za-z0-9_.-]+)\.yaml\})");
  for (std::sregex_iterator it(text.begin(), text.end(), borrow), end; it != end; ++it) {
    std::string borrowed = read_spec((*it)[1].str());
    if ((*it)[1].str() == bug.spec) replace_once(borrowed, bug.from, bug.to);
    std::ofstream(dir / ((*it)[1].str() + ".yaml")) << borrowed;
    copy_included(borrowed, dir);
  }
}

// specs/<name>.yaml at float only, with `from` replaced by `to`, under a temporary directory named
// after the spec and the bug, beside the specs it borrows from (`borrowed_bug` planted in one).
fs::path planted(const std::string& name, const std::string& bug, const std::string& from, const std::string& to,
                 const BorrowedBug& borrowed_bug = {}) {
  std::string text = read_spec(name);
  replace_once(text, "  T: [float, half, bfloat]\n", "  T: [float]\n");
  if (!from.empty()) replace_once(text, from, to);
  const fs::path dir = fs::temp_directory_path() / ("mtlgen-planted-" + name + "-" + bug);
  fs::create_directories(dir);
  copy_borrowed(text, dir, borrowed_bug);
  copy_included(text, dir);
  const fs::path spec = dir / (name + ".yaml");
  std::ofstream(spec) << text;
  return spec;
}

struct KernelRun {
  std::string printed;
  std::vector<nlohmann::json> cases;  // the kernel's (or family's) entries of the JSON report, one per case
};

// One run of every case of the spec; only the kernel's are kept.
KernelRun verify_kernel(const fs::path& spec, const std::string& kernel) {
  verify::VerifyOptions o;
  o.inputs = {spec.string()};
  o.module.cache_dir = MTLGEN_TEST_CACHE_DIR;
  o.result_cache = false;
  o.quiet = true;
  o.json_path = (spec.parent_path() / "results.json").string();
  fs::remove(o.json_path);
  std::ostringstream out, err;
  verify::run_verify(o, out, err);
  KernelRun run{out.str() + err.str(), {}};
  std::ifstream json(o.json_path);
  if (!json) return run;
  for (const auto& c : nlohmann::json::parse(json)) {
    if (c.at("kernel") == kernel) run.cases.push_back(c);
  }
  return run;
}

constexpr size_t kCiCases = 3;  // each family's CI cases, at float

// At least one family case fails, and every failure is a mismatch with the family's reference (no
// crash, no other checker).
void expect_caught(const std::string& family, const std::string& bug, const std::string& from, const std::string& to,
                   const BorrowedBug& borrowed_bug = {}) {
  const fs::path spec = planted(family, bug, from, to, borrowed_bug);
  const KernelRun run = verify_kernel(spec, family);
  ASSERT_EQ(run.cases.size(), kCiCases) << run.printed;
  size_t failed = 0;
  for (const auto& c : run.cases) {
    if (c.at("status") == "PASS") continue;
    ++failed;
    EXPECT_EQ(c.at("status"), "FAIL") << c.dump();
    for (const auto& p : c.at("problems")) EXPECT_EQ(p.at("checker"), "mismatch") << c.dump();
  }
  EXPECT_GT(failed, 0u) << spec << ": no family case caught the planted bug\n" << run.printed;
}

void expect_unchanged_passes(const std::string& family) {
  const std::string name = "name: " + family + "\n";
  const KernelRun run = verify_kernel(planted(family, "unchanged", name, name), family);
  ASSERT_EQ(run.cases.size(), kCiCases) << run.printed;
  for (const auto& c : run.cases) EXPECT_EQ(c.at("status"), "PASS") << c.dump();
}

TEST(DecodeLayer, FamilyCasesPassUnchanged) { expect_unchanged_passes("decode_layer"); }

TEST(DecodeLayer, CatchesAWrongHeadStride) {
  expect_caught("decode_layer", "head_stride", "k_cache + size_t(kv_head) * capacity * head_dim;",
                "k_cache + size_t(kv_head) * kv_len * head_dim;");
}

// The output and down projections forget the residual stream.
TEST(DecodeLayer, CatchesAMissingResidual) {
  expect_caught("decode_layer", "missing_residual", "float sum = float(residual[row0 + local_index]);",
                "float sum = 0.0f;");
}

// q_norm / k_norm applies its weight but not the norm.
TEST(DecodeLayer, CatchesASkippedHeadNorm) {
  expect_caught("decode_layer", "skipped_head_norm", "out_row[i] = T(float(x_row[i]) * norm * float(weight[i]));",
                "out_row[i] = T(float(x_row[i]) * float(weight[i]));");
}

// The cache update stores the query's first heads as keys (k_first ignored).
TEST(DecodeLayer, CatchesKeysReadAtTheQueryHeads) {
  expect_caught("decode_layer", "key_offset", "k_cache[dst] = k_src[size_t(k_first) * head_dim + gid];",
                "k_cache[dst] = k_src[gid];");
}

TEST(DecodeToken, FamilyCasesPassUnchanged) { expect_unchanged_passes("decode_token"); }

// The merge leaves out the last block (max_in_last_row_h66 puts the largest logit there).
TEST(DecodeToken, CatchesAnOffByOneInTheArgmaxMerge) {
  expect_caught("decode_token", "merge_off_by_one", "for (uint b = local_index; b < blocks; b += TG) {",
                "for (uint b = local_index; b + 1 < blocks; b += TG) {");
}

// The lm_head reads x as it came (no norm, no weight). Leaving out only 1 / rms would not show: a
// positive scale of every logit keeps the token.
TEST(DecodeToken, CatchesASkippedNorm) {
  expect_caught("decode_token", "skipped_norm", "{\n        out[i] = T(float(x[i]) * norm * float(w[i]));",
                "{\n        out[i] = x[i];");
}

// The lm_head's rows one 4-element vector too close together (every read still inside the matrix and
// aligned).
TEST(DecodeToken, CatchesAWrongRowStride) {
  expect_caught("decode_token", "row_stride", "w_rows[r] = w + size_t(min(row0 + r, rows - 1)) * cols;",
                "w_rows[r] = w + size_t(min(row0 + r, rows - 1)) * (cols - 4);");
}

TEST(DecodeLayerQ4_0, FamilyCasesPassUnchanged) { expect_unchanged_passes("decode_layer_q4_0"); }

// The MLP's output added to the layer's input x instead of h: the attention's residual is lost.
TEST(DecodeLayerQ4_0, CatchesTheResidualAddBoundToTheWrongStream) {
  expect_caught("decode_layer_q4_0", "residual_binding", "buffers: {x: mlp_out, residual: h}",
                "buffers: {x: mlp_out, residual: x}");
}

// The cache takes the keys before rope (the rotated heads bound to nothing): the position-4 and
// position-11 cases attend with unrotated keys.
TEST(DecodeLayerQ4_0, CatchesUnrotatedKeysInTheCache) {
  expect_caught("decode_layer_q4_0", "unrotated_keys", "buffers: {k_src: qk_rotated, v_src: qkv}",
                "buffers: {k_src: qk_normed, v_src: qkv}");
}

// A bug in a borrowed kernel: swiglu multiplies by the gate twice, never reading up.
TEST(DecodeLayerQ4_0, CatchesABugInABorrowedKernel) {
  expect_caught("decode_layer_q4_0", "swiglu_gate_twice", "", "",
                {"swiglu", "out[gid] = T(g / (1.0f + exp(-g)) * float(up[gid]));",
                 "out[gid] = T(g / (1.0f + exp(-g)) * g);"});
}

// The spec line that holds `text`, which must occur exactly once in the file.
int line_of(const fs::path& spec, const std::string& text) {
  std::ifstream in(spec);
  int found = 0;
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (line.find(text) == std::string::npos) continue;
    EXPECT_EQ(found, 0) << spec << ": `" << text << "` occurs more than once";
    found = n;
  }
  EXPECT_NE(found, 0) << spec << " no longer holds `" << text << "`";
  return found;
}

// At least one case fails, every failure is a mismatch, and each mismatch names the line that
// stores y as the last writer of the elements that differ (where a wrong decode ends up).
void expect_decoding_bug_caught(const std::string& kernel, const std::string& bug, const std::string& from,
                                const std::string& to) {
  const fs::path spec = planted(kernel, bug, from, to);
  const std::string store_line =
      spec.filename().string() + ":" + std::to_string(line_of(spec, "y[row0 + r] = T(sum);")) + ")";
  const KernelRun run = verify_kernel(spec, kernel);
  ASSERT_FALSE(run.cases.empty()) << run.printed;
  size_t failed = 0;
  for (const auto& c : run.cases) {
    if (c.at("status") == "PASS") continue;
    ++failed;
    EXPECT_EQ(c.at("status"), "FAIL") << c.dump();
    for (const auto& p : c.at("problems")) {
      EXPECT_EQ(p.at("checker"), "mismatch") << c.dump();
      EXPECT_NE(p.at("message").get<std::string>().find("last written at line"), std::string::npos) << c.dump();
      EXPECT_NE(p.at("message").get<std::string>().find(store_line), std::string::npos) << c.dump();
    }
  }
  EXPECT_GT(failed, 0u) << spec << ": no case caught the planted bug\n" << run.printed;
}

// The high nibble's weight adds the block's minimum twice.
TEST(Q4_1Matvec, CatchesTheMinimumAddedTwice) {
  expect_decoding_bug_caught("q4_1_matvec", "min_twice", "fma(d, float(q >> 4), m) * x_hi[j]",
                             "(fma(d, float(q >> 4), m) + m) * x_hi[j]");
}

// Elements 16..31 take their 5th bit from qh bit j, as elements 0..15 do, not from bit j + 16.
TEST(Q5_0Matvec, CatchesTheHighHalfReadingTheLowHalfsFifthBits) {
  expect_decoding_bug_caught("q5_0_matvec", "qh_bit", "((qh >> (j + 16)) & 1)", "((qh >> j) & 1)");
}

// A 3-, 5- or 6-bit code that straddles two words keeps only its low bits, those of the first word.
TEST(AffineMatvec, CatchesCodesCutOffAtTheWordEnd) {
  expect_decoding_bug_caught("affine_matvec", "no_straddle", "q |= stream[first / 32 + 1] << (32 - first % 32);", "");
}

}  // namespace
