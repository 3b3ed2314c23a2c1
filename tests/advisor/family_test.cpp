// A kernel family predicted dispatch by dispatch: each dispatch is its member's serving variant at
// the dims the dispatch binds, predicted as a lone kernel (its member's counters applied where
// given), and the family's time is the sum.
#include <gtest/gtest.h>

#include "advisor_test_util.h"

namespace mtlgen::advisor {
namespace {

using test::load;

const ir::Kernel& named(const std::vector<ir::Kernel>& kernels, const std::string& name) {
  for (const auto& k : kernels)
    if (k.name == name) return k;
  throw std::runtime_error("no kernel " + name);
}

const ir::Variant& entry(const ir::Kernel& k, const std::string& entry_point) {
  for (const auto& v : k.variants)
    if (v.entry_point == entry_point) return v;
  throw std::runtime_error("no variant " + entry_point);
}

// argmax_two_stage at 151,936 logits: argmax_blocks over n, then argmax_merge over the 149 block
// results, each at its default tuning (TG 256), in the library as kernels of their own.
TEST(Family, TheTimeIsTheSumOfTheMembersPredictedAtTheBoundDims) {
  const auto kernels = load("specs/argmax_two_stage.yaml");
  const ir::Kernel& family = named(kernels, "argmax_two_stage");
  const KernelAdvice a = advise(family, {});
  ASSERT_TRUE(a.skipped.empty()) << a.skipped;
  EXPECT_TRUE(a.points.empty());
  ASSERT_EQ(a.test->name, "vocab_151936");
  ASSERT_EQ(a.family.size(), 3u);  // float, half, bfloat at the one realistic case
  const FamilyPoint& p = a.family[0];
  EXPECT_EQ(p.variant->entry_point, "argmax_two_stage_f32");
  const std::vector<std::tuple<std::string, std::string, std::map<std::string, int64_t>>> expected = {
      {"argmax_blocks", "argmax_blocks_f32_tg256", {{"n", 151936}}},
      {"argmax_merge", "argmax_merge_tg256", {{"blocks", 149}}}};
  ASSERT_EQ(p.dispatches.size(), expected.size());
  for (size_t c = 0; c < chips().size(); ++c) {
    double sum = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
      const auto& [kernel, entry_point, dims] = expected[i];
      const DispatchPrediction& d = p.dispatches[i];
      EXPECT_EQ(d.dispatch, i + 1);
      EXPECT_EQ(d.member->name, kernel);
      EXPECT_EQ(d.variant->entry_point, entry_point);
      EXPECT_EQ(d.dims, dims);
      const ir::Kernel& member = named(kernels, kernel);
      const Prediction alone = predict(workload(member, entry(member, entry_point), dims), chips()[c]);
      EXPECT_DOUBLE_EQ(d.per_chip[c].time_us, alone.time_us) << kernel << " on " << chips()[c].name;
      EXPECT_DOUBLE_EQ(d.per_chip[c].launch_us, chips()[c].launch_us());  // each dispatch pays its launch
      sum += alone.time_us;
    }
    EXPECT_DOUBLE_EQ(p.total_us[c], sum) << chips()[c].name;
  }
}

// A member's counters (as `mtlgen report` takes them from the member's own analysis) are applied
// to its dispatches as to any tune point of its body; a member without counters keeps its spec's.
TEST(Family, AMembersCountersApplyToItsDispatchOnly) {
  const auto kernels = load("specs/argmax_two_stage.yaml");
  const ir::Kernel& family = named(kernels, "argmax_two_stage");
  Counters uncoalesced;
  SiteCounts site;
  site.buffer = "x";
  site.bytes = 4096;
  site.segments32 = 2;
  site.ideal_segments32 = 1;
  uncoalesced.sites = {site};
  const KernelAdvice plain = advise_family(family, {});
  const KernelAdvice counted = advise_family(family, {{"argmax_blocks", &uncoalesced}});
  ASSERT_EQ(counted.family.size(), plain.family.size());
  const DispatchPrediction &blocks = counted.family[0].dispatches[0], &merge = counted.family[0].dispatches[1];
  EXPECT_TRUE(blocks.counted);
  EXPECT_FALSE(merge.counted);
  EXPECT_DOUBLE_EQ(blocks.workload.coalescing, 2);
  Workload expected = workload(*blocks.member, *blocks.variant, blocks.dims);
  apply_counters(expected, uncoalesced);
  EXPECT_DOUBLE_EQ(blocks.per_chip[0].time_us, predict(expected, chips()[0]).time_us);
  EXPECT_GT(blocks.per_chip[0].dram_us, plain.family[0].dispatches[0].per_chip[0].dram_us * 1.9);
  EXPECT_DOUBLE_EQ(merge.workload.coalescing, 1);
  EXPECT_DOUBLE_EQ(merge.per_chip[0].time_us, plain.family[0].dispatches[1].per_chip[0].time_us);
}

// decode_layer: both benchmark cases (context 1 and 4,096), every weight type; one member at two
// dispatches with the dims each binds (the output and the down projection).
TEST(Family, DecodeLayerIsPredictedAtEachBenchmarkCaseWithEachDispatchsDims) {
  const auto kernels = load("specs/decode_layer.yaml");
  const ir::Kernel& family = named(kernels, "decode_layer");
  const KernelAdvice a = advise(family, {});
  ASSERT_TRUE(a.skipped.empty()) << a.skipped;
  ASSERT_EQ(a.family.size(), 6u);
  EXPECT_EQ(a.family[0].test->name, "qwen3_1p7b_ctx1");
  EXPECT_EQ(a.family[3].test->name, "qwen3_1p7b_ctx4096");
  const FamilyPoint& p = a.family[0];
  ASSERT_EQ(p.dispatches.size(), 10u);
  EXPECT_EQ(p.dispatches[6].member->name, "decode_layer_matvec_residual");
  EXPECT_EQ(p.dispatches[9].member->name, "decode_layer_matvec_residual");
  EXPECT_EQ(p.dispatches[6].dims, (std::map<std::string, int64_t>{{"rows", 2048}, {"cols", 2048}}));
  EXPECT_EQ(p.dispatches[9].dims, (std::map<std::string, int64_t>{{"rows", 2048}, {"cols", 6144}}));
  // Attention reads 4,096 cache rows instead of one: only its first pass grows.
  const FamilyPoint& long_context = a.family[3];
  for (size_t i = 0; i < 10; ++i) {
    const double short_us = p.dispatches[i].per_chip[3].time_us, long_us = long_context.dispatches[i].per_chip[3].time_us;
    if (p.dispatches[i].member->name == "decode_layer_attn_partial") EXPECT_GT(long_us, 10 * short_us);
    else EXPECT_DOUBLE_EQ(long_us, short_us) << p.dispatches[i].member->name;
  }
}

}  // namespace
}  // namespace mtlgen::advisor
