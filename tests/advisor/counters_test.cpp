// The advisor on the simulator's counters (access-counted modules, run in verify's sandbox):
// bytes and unique bytes per buffer, coalescing per access site, active lanes and barriers, the
// cost model checked, and the counter lints, each on a spec that shows one behaviour.
#include <gtest/gtest.h>

#include "advisor/simulate.h"
#include "advisor_test_util.h"

namespace mtlgen::advisor {
namespace {

KernelAdvice counted(const std::string& path) {
  static std::vector<std::vector<ir::Kernel>> keep;  // advice points into the kernels
  keep.push_back(test::load(path));
  verify::ModuleOptions o;
  o.cache_dir = MTLGEN_TEST_CACHE_DIR;
  KernelAdvice a = advise(keep.back().at(0), simulator_counter(o, 120, keep.back()));
  EXPECT_TRUE(a.counters.has_value());
  return a;
}

const BufferCounts& buffer(const Counters& c, const std::string& name) {
  for (const auto& b : c.buffers) {
    if (b.name == name) return b;
  }
  throw std::runtime_error("no buffer " + name);
}

TEST(Counters, TheOneSimdgroupArgmaxReadsEachLogitOnceCoalescedWithThirtyTwoLanes) {
  KernelAdvice a = counted("tests/advisor/specs/argmax_one_simdgroup.yaml");
  const Counters& c = *a.counters;
  EXPECT_EQ(a.test->name, "vocab_151936");
  EXPECT_EQ(buffer(c, "x").unique_loaded, 151936u * 4);
  EXPECT_EQ(buffer(c, "x").loaded, 151936u * 4);
  EXPECT_EQ(buffer(c, "out").unique_stored, 4u);
  EXPECT_EQ(c.threadgroup_count(), 1u);
  EXPECT_EQ(c.threads_per_group(), 32u);
  EXPECT_EQ(c.barriers, 0u);
  ASSERT_FALSE(c.sites.empty());
  const SiteCounts& load = c.sites.front();
  EXPECT_EQ(load.buffer, "x");
  EXPECT_EQ(load.spec_line, 31);           // float v = float(x_row[i]);
  EXPECT_DOUBLE_EQ(load.mean_lanes(), 32);  // all lanes take part in each step
  EXPECT_DOUBLE_EQ(load.coalescing(), 1);   // 32 consecutive floats: four 32-byte segments
  ASSERT_EQ(c.simd.size(), 2u);             // simd_max, simd_min: every lane active
  for (const auto& s : c.simd) {
    EXPECT_DOUBLE_EQ(s.mean_active_lanes(), 32) << s.function;
    EXPECT_GE(s.spec_line, 37);
  }
  ASSERT_EQ(test::of_lint(a, "reduction-one-simdgroup").size(), 1u);
  for (const auto& c : a.cost) EXPECT_TRUE(c.agrees) << c.message;
}

TEST(Counters, TheShippedArgmaxCountsItsBarriersAndHelperSimdFunctions) {
  KernelAdvice a = counted("specs/argmax.yaml");
  const Counters& c = *a.counters;
  EXPECT_EQ(c.threads_per_group(), 1024u);
  EXPECT_GT(c.barriers_per_thread(), 0);
  EXPECT_FALSE(c.simd.empty());
  EXPECT_TRUE(test::of_lint(a, "reduction-one-simdgroup").empty() ||
              test::of_lint(a, "reduction-one-simdgroup")[0].variant.find("tg32") != std::string::npos);
}

TEST(Counters, ARowPerThreadLoadIsUncoalescedAtItsLine) {
  KernelAdvice a = counted("tests/advisor/specs/row_sum_per_thread.yaml");
  auto found = test::of_lint(a, "uncoalesced");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].at.line, 30);  // s += float(row[i]);
  EXPECT_NE(found[0].message.find("`x`"), std::string::npos);
  EXPECT_GT(a.counters->coalescing(), 3.5);  // 8 bytes of a lane's window per 32-byte segment
}

TEST(Counters, ACostModelWithoutABufferIsFlaggedNamingIt) {
  KernelAdvice a = counted("tests/advisor/specs/scale_cost_without_w.yaml");
  ASSERT_EQ(a.cost.size(), 2u);
  EXPECT_FALSE(a.cost[0].agrees);
  EXPECT_EQ(a.cost[0].declared, 4 * 512 * 4);
  EXPECT_EQ(a.cost[0].counted, (4u * 512 + 512) * 4);
  EXPECT_NE(a.cost[0].message.find("buffer `w`"), std::string::npos) << a.cost[0].message;
  EXPECT_TRUE(a.cost[1].agrees) << a.cost[1].message;
  auto found = test::of_lint(a, "cost-model");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].at.line, a.kernel->cost.bytes_read->loc.line);
}

TEST(Counters, AnInputReadTwiceIsAReread) {
  KernelAdvice a = counted("tests/advisor/specs/rms_norm_one_simdgroup.yaml");
  auto found = test::of_lint(a, "reread");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].message.find("`x` is loaded 2.00 times per byte (16384 of 8192 bytes loaded by 1 simdgroup(s))"), std::string::npos) << found[0].message;
  EXPECT_NE(found[0].message.find("lines 34, 40"), std::string::npos) << found[0].message;
}

TEST(Counters, CountersSurviveTheirJsonForm) {
  KernelAdvice a = counted("tests/advisor/specs/scale_cost_without_w.yaml");
  nlohmann::json j = to_json(a);
  EXPECT_EQ(j["counters"]["unique_bytes"], (2u * 4 * 512 + 512) * 4);
  EXPECT_EQ(j["points"].size(), 1u);
  EXPECT_EQ(j["points"][0]["predictions"].size(), chips().size());
  EXPECT_THROW(counters_from_json(nlohmann::json::object()), std::runtime_error);
}

}  // namespace
}  // namespace mtlgen::advisor
