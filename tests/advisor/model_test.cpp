// The advisor's model and static lints, without the simulator: the chip table, the floor, the
// parallelism and memory terms, and the done-when comparison of the single-simdgroup argmax and
// rms_norm (tests/advisor/specs/) with the shipped TG 1,024 / 512 versions.
#include <gtest/gtest.h>

#include <algorithm>

#include "advisor/lints.h"
#include "advisor_test_util.h"

namespace mtlgen::advisor {
namespace {

TEST(Chips, TableHoldsDesignBandwidthsAndCores) {
  const std::vector<std::pair<std::string, double>> design = {{"M1", 68},     {"M2", 100},    {"M3", 100},
                                                              {"M3 Max", 400}, {"M4", 120},    {"M4 Pro", 273},
                                                              {"M4 Max", 546}};
  ASSERT_EQ(chips().size(), design.size());
  for (size_t i = 0; i < design.size(); ++i) {
    EXPECT_EQ(chips()[i].name, design[i].first);
    EXPECT_EQ(chips()[i].bandwidth_gbs, design[i].second);
  }
  EXPECT_EQ(chip_named("M3 Max").gpu_cores, 40);
  EXPECT_EQ(chip_named("M1").gpu_cores, 8);
  EXPECT_THROW(chip_named("M9"), std::invalid_argument);
}

TEST(Model, AFullGridRunsAtTheBandwidthFloorPlusLaunch) {
  Workload w{.unique_bytes = 400'000'000, .threadgroups = 100'000, .threads_per_threadgroup = 256};
  Prediction p = predict(w, chip_named("M3 Max"));
  EXPECT_DOUBLE_EQ(p.floor_us, 1000);  // 400 MB at 400 GB/s
  EXPECT_DOUBLE_EQ(p.parallelism, 1);
  EXPECT_DOUBLE_EQ(p.time_us, 1000 + kLaunchMicroseconds);
}

TEST(Model, FewResidentThreadsStretchTheFloor) {
  Workload one{.unique_bytes = 1'000'000, .threadgroups = 1, .threads_per_threadgroup = 32};
  Workload more = one;
  more.threads_per_threadgroup = 1024;
  const Chip& chip = chip_named("M3 Max");
  EXPECT_EQ(predict(one, chip).resident_threads, 32u);
  // 32 threads stream 32 * 12 MB/s: the time is bytes over that, 32x that of 1,024 threads
  EXPECT_NEAR(predict(one, chip).time_us - kLaunchMicroseconds, 1e6 / (32 * kThreadBytesPerSecond) * 1e6, 1e-6);
  EXPECT_NEAR((predict(one, chip).time_us - kLaunchMicroseconds) / (predict(more, chip).time_us - kLaunchMicroseconds), 32, 1e-9);
}

TEST(Model, ThreadgroupMemoryAboveEightKiBHalvesTheThreadgroupsPerCore) {
  EXPECT_EQ(threadgroups_per_core(128, 8 * 1024), 8u);
  EXPECT_EQ(threadgroups_per_core(128, 8 * 1024 + 16), 4u);
  EXPECT_EQ(threadgroups_per_core(128, 16 * 1024 + 16), 1u);
  EXPECT_EQ(threadgroups_per_core(1024, 0), 1u);  // threads limit
  EXPECT_EQ(threadgroups_per_core(32, 0), kThreadgroupsPerCore);
}

TEST(Model, CoalescingMultipliesTheMemoryTime) {
  Workload w{.unique_bytes = 400'000'000, .threadgroups = 100'000, .threads_per_threadgroup = 256, .coalescing = 4};
  EXPECT_DOUBLE_EQ(predict(w, chip_named("M3 Max")).time_us, 4000 + kLaunchMicroseconds);
}

// The model reproduces the measured ratio of the seeds within a factor of two (1,713 / 45 us).
TEST(Predictions, OneSimdgroupArgmaxIsFarSlowerThanTheShippedOne) {
  auto slow = test::load("tests/advisor/specs/argmax_one_simdgroup.yaml");
  auto shipped = test::load("specs/argmax.yaml");
  ir::TestCase vocab = test::case_with({{"rows", 1}, {"n", 151936}});
  const Chip& m3max = chip_named("M3 Max");
  double t_slow = predict(workload(slow[0], slow[0].variants[0], vocab), m3max).time_us;
  double t_fast = predict(workload(shipped[0], test::variant_with(shipped[0], 1024), vocab), m3max).time_us;
  EXPECT_GT(t_slow / t_fast, 1713.0 / 45 / 2);
  EXPECT_LT(t_slow / t_fast, 1713.0 / 45 * 2);
  EXPECT_GT(t_slow, 1713.0 / 2);
  EXPECT_LT(t_slow, 1713.0 * 2);
}

TEST(Predictions, OneSimdgroupRmsNormIsFarSlowerThanTheShippedOne) {
  auto slow = test::load("tests/advisor/specs/rms_norm_one_simdgroup.yaml");
  auto shipped = test::load("specs/rms_norm.yaml");
  ir::TestCase row = test::case_with({{"rows", 1}, {"n", 2048}});
  const Chip& m3max = chip_named("M3 Max");
  double t_slow = predict(workload(slow[0], slow[0].variants[0], row), m3max).time_us;
  double t_fast = predict(workload(shipped[0], test::variant_with(shipped[0], 512), row), m3max).time_us;
  EXPECT_GT(t_slow / t_fast, 68 / 8.85 / 2);  // measured: 68 and 8.85 us
  EXPECT_GT(t_slow, 68.0 / 2);
  EXPECT_LT(t_slow, 68.0 * 2);
}

// Without counters: the static lints alone flag the original kernels at the reduction line.
TEST(StaticLints, TheReductionLintNamesTheSimdReductionLineOfBothOriginals) {
  for (const auto& [path, line] : {std::pair<std::string, int>{"tests/advisor/specs/argmax_one_simdgroup.yaml", 37},
                                   {"tests/advisor/specs/rms_norm_one_simdgroup.yaml", 37}}) {
    SCOPED_TRACE(path);
    auto kernels = test::load(path);
    KernelAdvice a = advise(kernels[0], {});
    auto found = test::of_lint(a, "reduction-one-simdgroup");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].at.line, line);
    EXPECT_EQ(found[0].variant, kernels[0].variants[0].entry_point);
    EXPECT_NE(found[0].fix.find("tg_sum<TG>"), std::string::npos);
  }
}

TEST(StaticLints, TheShippedDefaultsAreNotFlaggedForTheirReduction) {
  for (const char* path : {"specs/argmax.yaml", "specs/rms_norm.yaml"}) {
    SCOPED_TRACE(path);
    auto kernels = test::load(path);
    KernelAdvice a = advise(kernels[0], {});
    for (const auto& f : test::of_lint(a, "reduction-one-simdgroup")) {
      EXPECT_NE(f.variant.find("tg32"), std::string::npos) << f.text();  // only the TG 32 tune points
    }
  }
}

TEST(StaticLints, OneThreadgroupForAVocabRowIsFewerThanTheCores) {
  auto kernels = test::load("specs/argmax.yaml");
  KernelAdvice a = advise(kernels[0], {});
  auto found = test::of_lint(a, "few-threadgroups");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].message.find("M1 (8 cores)"), std::string::npos) << found[0].message;
  EXPECT_EQ(found[0].at.line, kernels[0].dispatch.loc.line);
}

TEST(StaticLints, ThreadgroupMemoryAboveEightKiBIsFlaggedAtTheArray) {
  auto kernels = test::load("specs/argmax.yaml");
  ir::Kernel k = kernels[0];
  Point p;
  p.variant = &k.variants[0];
  p.workload = Workload{.threadgroups = 1, .threads_per_threadgroup = 32, .threadgroup_memory_bytes = 12 * 1024};
  auto found = static_lints(k, p, k.tests.cases[0]);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].lint, "threadgroup-memory");
  EXPECT_EQ(found[0].at.line, k.threadgroup_arrays.front().loc.line);
}

TEST(RealisticCase, IsTheCaseMovingTheMostBytes) {
  auto kernels = test::load("specs/argmax.yaml");
  const ir::TestCase* t = realistic_case(kernels[0]);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->dims.at("n"), 151936);
}

TEST(RealisticCase, IsTheLargestBenchmarkCaseWhereTheSpecMarksAny) {
  auto kernels = test::load("specs/argmax.yaml");
  ir::Kernel& k = kernels[0];
  auto named = [&](const std::string& name) -> ir::TestCase& {
    return *std::find_if(k.tests.cases.begin(), k.tests.cases.end(), [&](const auto& t) { return t.name == name; });
  };
  for (auto& t : k.tests.cases) t.benchmark = false;
  named("one").benchmark = named("ragged_tail").benchmark = true;  // n = 1 and 4097, not the 151936 ones
  EXPECT_EQ(realistic_case(k), &named("ragged_tail"));
  named("one").benchmark = named("ragged_tail").benchmark = false;
  EXPECT_EQ(realistic_case(k)->dims.at("n"), 151936);  // none marked: the largest by bytes again
}

}  // namespace
}  // namespace mtlgen::advisor
