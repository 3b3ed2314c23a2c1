// Test data as specs describe it: a block layout is laid out as Metal lays out the struct and filled
// field by field (realistic scales, never NaN unless asked); a `bytes` buffer without a fill gets
// random bytes; an output's own tolerance wins over its element type's.
#include <cmath>
#include <cstring>
#include <set>

#include "spec_test_util.h"
#include "verify/compare.h"
#include "verify/inputs.h"
#include "mtlgen_numeric.h"

namespace mtlgen::spec::testing {
namespace {

constexpr const char* kQ8Spec = R"yaml(name: q8_sum
dims:
  blocks: {min: 1}
blocks:
  q8_0: {d: half, qs: "int8[32]"}
buffers:
  w: {type: bytes, shape: [blocks * 34], access: read, block: q8_0}
  raw: {type: bytes, shape: [blocks], access: read}
  out: {type: float, shape: [blocks], access: write}
  count: {type: uint32, shape: [1], access: write}
dispatch:
  threadgroups: [blocks]
  threads_per_threadgroup: [32]
body: |
  if (simd_lane == 0) out[tgid] = float(w[tgid * 34]) + float(raw[tgid]);
  if (gid == 0) count[0] = blocks;
reference: |
  for (int64_t b = 0; b < blocks; ++b) out[b] = float(w[b * 34]) + float(raw[b]);
  count[0] = uint32_t(blocks);
tests:
  tolerance:
    float: {max_abs: 1.0e-5}
    out: {max_abs: 0.5, max_rel: 0.25}
  cases:
    - name: realistic
      dims: {blocks: 64}
      inputs:
        w: {d: {dist: normal, std: 0.02}, qs: {dist: uniform, min: -127, max: 127, set: {5: -128}}}
    - {name: defaults, dims: {blocks: 64}}
)yaml";

const ir::TestCase& case_named(const ir::Kernel& k, const std::string& name) {
  for (const auto& c : k.tests.cases) if (c.name == name) return c;
  throw std::runtime_error("no case " + name);
}

TEST(BlockLayout, IsLaidOutAsMetalLaysOutTheStruct) {
  auto loaded = load_text(kQ8Spec);
  ASSERT_TRUE(loaded.kernel) << loaded.diags.format_all();
  const ir::BlockLayout& q8 = loaded.kernel->blocks.at(0);
  EXPECT_EQ(q8.size, 34u);  // struct { half d; int8_t qs[32]; }
  EXPECT_EQ(q8.align, 2u);
  EXPECT_EQ(q8.field("qs")->offset, 2u);
  std::string text = kQ8Spec;
  text.replace(text.find("{d: half, qs: \"int8[32]\"}"), 25, "{q: uint8, s: float, t: \"uint8[3]\"}");
  text.replace(text.find("        w: {d:"), text.find("    - {name: defaults") - text.find("        w: {d:"),
               "        w: {q: {dist: bits}, t: {dist: constant, value: 3}}\n");
  text.replace(text.find("  cases:"), 0, "  inputs: {dist: uniform, min: 0, max: 9}\n");
  auto odd = load_text(text);
  ASSERT_TRUE(odd.kernel) << odd.diags.format_all();
  const ir::BlockLayout& b = odd.kernel->blocks.at(0);
  EXPECT_EQ(b.field("s")->offset, 4u);  // aligned to its size
  EXPECT_EQ(b.field("t")->offset, 8u);
  EXPECT_EQ(b.size, 12u);  // padded to the float's alignment
}

TEST(BlockFill, FillsEachFieldFromItsOwnDistribution) {
  auto loaded = load_text(kQ8Spec);
  ASSERT_TRUE(loaded.kernel) << loaded.diags.format_all();
  const ir::Kernel& k = *loaded.kernel;
  const ir::BlockLayout* q8 = k.block_of(k.buffers[0]);
  ASSERT_NE(q8, nullptr);
  std::vector<uint8_t> w(64 * 34);
  verify::fill_input(k.input_fill(case_named(k, "realistic"), "w"), ir::ScalarType::bytes, w.data(), w.size(), 7, q8);
  std::set<int> quants;
  for (size_t b = 0; b < 64; ++b) {
    uint16_t bits;
    std::memcpy(&bits, &w[b * 34], 2);
    float d = float(half::from_bits(bits));
    EXPECT_TRUE(std::isfinite(d) && std::fabs(d) < 0.2f) << "block " << b << " scale " << d;
    for (size_t j = 0; j < 32; ++j) quants.insert(int(int8_t(w[b * 34 + 2 + j])));
  }
  EXPECT_EQ(int8_t(w[2 + 5]), -128) << "`set:` indexes the field's elements";
  EXPECT_LE(*quants.begin(), -120);
  EXPECT_GE(*quants.rbegin(), 120);
  EXPECT_GT(quants.size(), 200u) << "quants spread over the range";
}

TEST(BlockFill, UnnamedFieldsGetThePlansDefaultNotRawBits) {
  auto loaded = load_text(kQ8Spec);
  ASSERT_TRUE(loaded.kernel) << loaded.diags.format_all();
  const ir::Kernel& k = *loaded.kernel;
  std::vector<uint8_t> w(64 * 34);
  verify::fill_input(k.input_fill(case_named(k, "defaults"), "w"), ir::ScalarType::bytes, w.data(), w.size(), 7,
                     k.block_of(k.buffers[0]));
  for (size_t b = 0; b < 64; ++b) {
    uint16_t bits;
    std::memcpy(&bits, &w[b * 34], 2);
    EXPECT_TRUE(std::isfinite(float(half::from_bits(bits)))) << "block " << b;
  }
}

TEST(BlockFill, AnUnsignedFieldTheDefaultDoesNotFitIsReportedAtTheField) {
  std::string text = kQ8Spec;
  auto replace = [&](const std::string& from, const std::string& to) { text.replace(text.find(from), from.size(), to); };
  replace("qs: \"int8[32]\"", "qs: \"uint8[32]\"");
  replace("min: -127, max: 127, set: {5: -128}", "min: 0, max: 255");
  auto loaded = load_text(text);
  EXPECT_FALSE(loaded.kernel);
  ASSERT_EQ(loaded.diags.error_count(), 1) << loaded.diags.format_all();
  const auto& d = loaded.diags.all().front();
  EXPECT_EQ(d.loc.line, 5) << loaded.diags.format_all();  // `q8_0: {d: half, qs: ...}`, at `qs`
  EXPECT_NE(d.message.find("field `qs` of `w` (uint8)"), std::string::npos) << d.message;
  EXPECT_NE(d.hint.find("gets the default"), std::string::npos) << d.hint;
}

TEST(BlockFill, RefusesBytesThatAreNotWholeBlocks) {
  auto loaded = load_text(kQ8Spec);
  ASSERT_TRUE(loaded.kernel);
  const ir::Kernel& k = *loaded.kernel;
  std::vector<uint8_t> w(35);
  EXPECT_THROW(verify::fill_input(k.input_fill(case_named(k, "defaults"), "w"), ir::ScalarType::bytes, w.data(),
                                  w.size(), 7, k.block_of(k.buffers[0])),
               std::invalid_argument);
}

TEST(BytesFill, ABytesBufferWithoutAFillGetsEveryBytePattern) {
  auto loaded = load_text(kQ8Spec);
  ASSERT_TRUE(loaded.kernel);
  const ir::Kernel& k = *loaded.kernel;
  ir::InputFill fill = k.input_fill(case_named(k, "defaults"), "raw");
  EXPECT_EQ(fill.dist, ir::Distribution::bits);
  std::vector<uint8_t> raw(4096);
  verify::fill_input(fill, ir::ScalarType::bytes, raw.data(), raw.size(), 3);
  EXPECT_EQ(std::set<uint8_t>(raw.begin(), raw.end()).size(), 256u);
}

TEST(OutputTolerance, AnOutputsOwnToleranceWinsOverItsType) {
  auto loaded = load_text(kQ8Spec);
  ASSERT_TRUE(loaded.kernel) << loaded.diags.format_all();
  const ir::Kernel& k = *loaded.kernel;
  EXPECT_EQ(verify::tolerance_for(k, "out", ir::ScalarType::f32).max_abs, 0.5);
  EXPECT_EQ(verify::tolerance_for(k, "other", ir::ScalarType::f32).max_abs, 1.0e-5);
  EXPECT_TRUE(verify::tolerance_for(k, "count", ir::ScalarType::u32).exact);
}

}  // namespace
}  // namespace mtlgen::spec::testing
