// The advisor's model and static lints, without the simulator: the chip table, the model's terms
// (floor, load paths, latency chain, occupancy), and the lints that need no counters: the
// single-simdgroup reduction (argmax and rms_norm flagged, the matvecs not), per-lane constant
// tables, threadgroup memory. calibration_test.cpp holds the seed measurements.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

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

TEST(Chips, LaunchAndLatencyFollowTheChip) {
  EXPECT_DOUBLE_EQ(chip_named("M3 Max").launch_us(), kM3MaxLaunchMicroseconds);
  EXPECT_DOUBLE_EQ(chip_named("M3 Max").latency_us(), kM3MaxLatencyMicroseconds);
  EXPECT_GT(chip_named("M1").latency_us(), chip_named("M4 Max").latency_us());  // a slower clock
  EXPECT_GT(chip_named("M1").launch_us(), chip_named("M4 Max").launch_us());
}

TEST(Model, AFullGridRunsAtTheBandwidthFloorPlusLaunch) {
  Workload w{.unique_bytes = 400'000'000, .threadgroups = 100'000, .threads_per_threadgroup = 256};
  const Chip& chip = chip_named("M3 Max");
  Prediction p = predict(w, chip);
  EXPECT_DOUBLE_EQ(p.floor_us, 1000);  // 400 MB at 400 GB/s
  EXPECT_DOUBLE_EQ(p.parallelism, 1);
  EXPECT_FALSE(p.latency_bound());
  EXPECT_DOUBLE_EQ(p.time_us, 1000 + chip.launch_us());
}

// Many one-simdgroup threadgroups share each core: the grid fills the machine and the time is
// the floor's, as for the matvecs' TG 32 variants (one simdgroup per row group, ~38,000 groups).
TEST(Model, ManyOneSimdgroupThreadgroupsFillTheMachine) {
  Workload w{.unique_bytes = 175'000'000, .threadgroups = 37'984, .threads_per_threadgroup = 32};
  const Chip& chip = chip_named("M3 Max");
  Prediction p = predict(w, chip);
  EXPECT_EQ(p.threadgroups_per_core, kThreadsPerCore / 32);
  EXPECT_FALSE(p.latency_bound());
  EXPECT_DOUBLE_EQ(p.parallelism, 1);
  EXPECT_DOUBLE_EQ(p.time_us, p.floor_us + chip.launch_us());
}

// One threadgroup: each thread waits one round trip per 4 bytes it loads.
TEST(Model, OneThreadgroupWaitsOnItsChainOfRoundTrips) {
  Workload one{.unique_bytes = 1'000'000, .threadgroups = 1, .threads_per_threadgroup = 32};
  Workload more = one;
  more.threads_per_threadgroup = 1024;
  for (const auto& chip : chips()) {
    SCOPED_TRACE(chip.name);
    const Prediction slow = predict(one, chip), fast = predict(more, chip);
    EXPECT_TRUE(slow.latency_bound());
    EXPECT_EQ(slow.resident_threads, 32u);
    EXPECT_NEAR(slow.time_us - chip.launch_us(), std::ceil(1e6 / 32 / 4) * chip.latency_us(), 1e-9);
    EXPECT_NEAR((slow.time_us - chip.launch_us()) / (fast.time_us - chip.launch_us()), 7813.0 / 245, 1e-9);
  }
}

TEST(Model, WiderLoadsAndSynchronisationsChangeTheChain) {
  Workload w{.unique_bytes = 65'536, .threadgroups = 1, .threads_per_threadgroup = 256};
  const Chip& chip = chip_named("M3 Max");
  EXPECT_NEAR(predict(w, chip).latency_us, 64 * chip.latency_us(), 1e-9);
  w.bytes_in_flight = 16;
  EXPECT_NEAR(predict(w, chip).latency_us, 16 * chip.latency_us(), 1e-9);
  w.sync_phases = 2;
  EXPECT_NEAR(predict(w, chip).latency_us, 18 * chip.latency_us(), 1e-9);
}

TEST(Model, ThreadgroupsPerCoreFollowThreadsAndThreadgroupMemory) {
  EXPECT_EQ(threadgroups_per_core(32, 0), kThreadsPerCore / 32);
  EXPECT_EQ(threadgroups_per_core(128, 0), kThreadsPerCore / 128);
  EXPECT_EQ(threadgroups_per_core(1024, 0), kThreadsPerCore / 1024);
  EXPECT_EQ(threadgroups_per_core(128, 8 * 1024), 8u);  // 64 KiB of threadgroup memory per core
  EXPECT_EQ(threadgroups_per_core(128, 16 * 1024 + 16), 3u);
  EXPECT_EQ(threadgroups_per_core(1024, 40 * 1024), 1u);  // at least one
}

TEST(Model, CoalescingMultipliesTheDramTime) {
  Workload w{.unique_bytes = 400'000'000, .threadgroups = 100'000, .threads_per_threadgroup = 256, .coalescing = 4};
  const Chip& chip = chip_named("M3 Max");
  EXPECT_DOUBLE_EQ(predict(w, chip).time_us, 4000 + chip.launch_us());
}

// Re-reads from cache pass through the busy cores' load paths, kCoreBytesPerCycle each.
TEST(Model, ReReadsAreBoundByTheCoresLoadPaths) {
  Workload w{.unique_bytes = 4'000'000, .loaded_bytes = 40'000'000, .threadgroups = 4'000,
             .threads_per_threadgroup = 64};
  const Chip& chip = chip_named("M3 Max");
  const Prediction p = predict(w, chip);
  EXPECT_NEAR(p.load_us, 40e6 / (40 * kCoreBytesPerCycle * chip.clock_ghz * 1e3), 1e-9);
  EXPECT_DOUBLE_EQ(p.time_us, p.load_us + chip.launch_us());
}

// Few threadgroups draw only the bandwidth of the cores they run on, and the busiest core of an
// uneven grid sets the time.
TEST(Model, FewThreadgroupsDrawOnlyTheirCoresBandwidth) {
  Workload w{.unique_bytes = 40'000'000, .threadgroups = 4, .threads_per_threadgroup = 1024, .bytes_in_flight = 1e9};
  const Chip& chip = chip_named("M3 Max");
  EXPECT_NEAR(predict(w, chip).dram_us, 40e6 / (4 * kCoreBytesPerCycle * chip.clock_ghz * 1e3), 1e-9);
  w.threadgroups = 60;  // 40 cores: 20 run two
  EXPECT_DOUBLE_EQ(predict(w, chip).imbalance, 2 / 1.5);
}

// argmax over 151,936 logits is one threadgroup waiting on its round trips: its time follows
// each chip's clock (slowest on the M1, fastest on the M4 Max), not one number for every chip.
TEST(Predictions, TheArgmaxFollowsEachChipsClock) {
  auto shipped = test::load("specs/argmax.yaml");
  ir::TestCase vocab = test::case_with({{"rows", 1}, {"n", 151936}});
  const Workload w = workload(shipped[0], test::variant_with(shipped[0], 1024), vocab);
  for (const auto& a : chips()) {
    for (const auto& b : chips()) {
      if (a.clock_ghz < b.clock_ghz) {
        EXPECT_GT(predict(w, a).time_us, predict(w, b).time_us) << a.name << " " << b.name;
      }
    }
  }
  EXPECT_GT(predict(w, chip_named("M1")).time_us / predict(w, chip_named("M4 Max")).time_us, 1.3);
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

// Only the TG 32 tune points of argmax (one threadgroup per row) and rms_norm (64 rows: too few
// threadgroups to fill the machine) reduce in one simdgroup where it costs.
TEST(StaticLints, TheShippedArgmaxAndRmsNormAreFlaggedAtTg32Only) {
  for (const char* path : {"specs/argmax.yaml", "specs/rms_norm.yaml"}) {
    SCOPED_TRACE(path);
    auto kernels = test::load(path);
    KernelAdvice a = advise(kernels[0], {});
    auto found = test::of_lint(a, "reduction-one-simdgroup");
    ASSERT_FALSE(found.empty());
    for (const auto& f : found) EXPECT_NE(f.variant.find("tg32"), std::string::npos) << f.text();
  }
}

// One simdgroup per row group over tens of thousands of threadgroups is the matvecs' design: the
// grid fills every core, and no lint may say otherwise.
TEST(StaticLints, TheShippedMatvecsOneSimdgroupVariantsAreNotFlagged) {
  size_t one_simdgroup_points = 0;
  for (const char* path : {"specs/matvec.yaml", "specs/q4_0_matvec.yaml", "specs/q4_1_matvec.yaml",
                           "specs/q5_0_matvec.yaml", "specs/q8_0_matvec.yaml", "specs/nvfp4_matvec.yaml",
                           "specs/nvfp4_qkv_matvec.yaml", "specs/nvfp4_gate_up_matvec.yaml", "specs/affine_matvec.yaml",
                           "specs/rms_norm_matvec.yaml", "specs/rms_norm_q4_0_matvec.yaml"}) {
    SCOPED_TRACE(path);
    auto kernels = test::load(path);
    KernelAdvice a = advise(kernels[0], {});
    for (const auto& p : a.points) one_simdgroup_points += p.workload.threads_per_threadgroup == 32;
    for (const auto& f : test::of_lint(a, "reduction-one-simdgroup")) ADD_FAILURE() << f.text();
  }
  EXPECT_GT(one_simdgroup_points, 9u);
}

TEST(StaticLints, APerLaneConstantTableIsFlaggedAtTheLookupAndItsBitDecodeTwinIsNot) {
  auto planted = test::load("tests/advisor/specs/e2m1_constant_table.yaml");
  auto found = test::of_lint(advise(planted[0], {}), "constant-table");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].at.line, planted[0].body.loc.line + 1);  // out[gid] = T(E2M1_VALUES[codes[gid] & 0xF]);
  EXPECT_NE(found[0].message.find("`E2M1_VALUES` is indexed by `codes`"), std::string::npos) << found[0].message;
  EXPECT_NE(found[0].fix.find("bit operations"), std::string::npos);
  auto twin = test::load("tests/advisor/specs/e2m1_bit_decode.yaml");
  EXPECT_TRUE(test::of_lint(advise(twin[0], {}), "constant-table").empty());
}

// A table read at a loop counter or a constant is the same address in every lane: a broadcast.
TEST(StaticLints, AConstantTableReadAtAUniformIndexIsNotFlagged) {
  auto kernels = test::load("tests/advisor/specs/e2m1_constant_table.yaml");
  ir::Kernel k = kernels[0];
  k.body.text = "float s = 0.0f;\nfor (uint i = 0; i < 16; ++i) s += E2M1_VALUES[i] * E2M1_VALUES[TG % 16];\n"
                "if (gid < n) out[gid] = T(s * E2M1_VALUES[3u]);\n";
  EXPECT_TRUE(test::of_lint(advise(k, {}), "constant-table").empty());
}

// The shipped nvfp4 specs decode with bit operations; no shipped kernel reads a table per lane.
TEST(StaticLints, NoShippedKernelReadsAConstantTablePerLane) {
  for (const auto& k : test::load("specs")) {
    for (const auto& f : test::of_lint(advise(k, {}), "constant-table")) ADD_FAILURE() << f.text();
  }
}

TEST(StaticLints, OneThreadgroupForAVocabRowIsFewerThanTheCores) {
  auto kernels = test::load("specs/argmax.yaml");
  KernelAdvice a = advise(kernels[0], {});
  auto found = test::of_lint(a, "few-threadgroups");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].message.find("M1 (8 cores)"), std::string::npos) << found[0].message;
  EXPECT_NE(found[0].fix.find("two-stage reduction"), std::string::npos) << found[0].fix;  // no tune point fills them
  EXPECT_EQ(found[0].at.line, kernels[0].dispatch.loc.line);
}

// An elementwise kernel at TG 256 over 6,144 elements (24 threadgroups) has a tune point that
// fills every core: the fix names it rather than a two-stage reduction.
TEST(StaticLints, FewThreadgroupsNamesATunePointThatFillsTheCores) {
  auto kernels = test::load("specs/swiglu.yaml");
  const ir::Kernel& k = kernels[0];
  KernelAdvice a = advise(k, {});
  auto found = test::of_lint(a, "few-threadgroups");
  ASSERT_FALSE(found.empty());
  for (const auto& f : found) {
    if (f.variant != "swiglu_f32_tg256") continue;
    EXPECT_NE(f.message.find("24 threadgroup(s) at case `qwen3_1p7b`"), std::string::npos) << f.message;
    EXPECT_NE(f.fix.find("use the tune point TG=64 (swiglu_f32_tg64: 96 threadgroups)"), std::string::npos) << f.fix;
    return;
  }
  ADD_FAILURE() << "no few-threadgroups finding for swiglu_f32_tg256";
}

TEST(StaticLints, ThreadgroupMemoryThatHoldsFewerThreadgroupsThanTheThreadsWouldIsFlaggedAtTheArray) {
  auto kernels = test::load("specs/argmax.yaml");
  ir::Kernel k = kernels[0];
  Point p;
  p.variant = &k.variants[0];
  p.workload = Workload{.threadgroups = 1, .threads_per_threadgroup = 32, .threadgroup_memory_bytes = 12 * 1024};
  auto found = static_lints(k, p, k.tests.cases[0]);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].lint, "threadgroup-memory");
  EXPECT_EQ(found[0].at.line, k.threadgroup_arrays.front().loc.line);
  EXPECT_NE(found[0].message.find("hold 5 threadgroup(s) (160 threads) where its threads would allow 64"),
            std::string::npos) << found[0].message;
  p.workload.threads_per_threadgroup = 1024;  // 12 KiB: the threads allow two per core, the memory five
  EXPECT_TRUE(static_lints(k, p, k.tests.cases[0]).empty());
}

// A lane that owns an 18-byte q4_0 block: the fix is in how a block is loaded or laid out, not
// "lane i reads element base + i"; an array of floats keeps that fix.
TEST(CounterLints, UncoalescedBlocksGetTheBlockLayoutsFix) {
  auto kernels = test::load("specs/q4_0_matvec.yaml");
  const ir::Kernel& k = kernels[0];
  Counters c;
  SiteCounts s{.buffer = "w", .line = 1, .spec_line = 70, .file = {}, .accesses = 1000, .bytes = 1000, .simd_accesses = 10,
               .lanes = 320, .distinct_bytes = 1280, .segments32 = 320, .ideal_segments32 = 40};
  c.sites = {s};
  auto found = counter_lints(k, k.variants[0], c);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].lint, "uncoalesced");
  EXPECT_NE(found[0].fix.find("`w` is 18-byte blocks (2-byte aligned) and this site loads 1 byte(s) per access"),
            std::string::npos) << found[0].fix;
  EXPECT_NE(found[0].fix.find("576 bytes for 32 lanes"), std::string::npos) << found[0].fix;
  EXPECT_EQ(found[0].fix.find("element base + i"), std::string::npos) << found[0].fix;
  c.sites[0].buffer = "x";  // vec<T, 4>: an array of scalars
  found = counter_lints(k, k.variants[0], c);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].fix.find("element base + i"), std::string::npos) << found[0].fix;
}

// The simulator counts a vec<float, 4> load as four sites at one line: together they are one
// 16-byte load, the width the model's bytes in flight take.
TEST(CounterTerms, TheWidestLoadTakesTheSitesOfOneLineTogether) {
  Counters c;
  for (int i = 0; i < 4; ++i) c.sites.push_back({.buffer = "x", .line = 10 + i, .spec_line = 113, .file = {}, .accesses = 100, .bytes = 400});
  c.sites.push_back({.buffer = "w", .line = 20, .spec_line = 62, .file = {}, .accesses = 100, .bytes = 800});
  c.sites.push_back({.buffer = "y", .store = true, .line = 30, .spec_line = 128, .file = {}, .accesses = 10, .bytes = 640});
  EXPECT_DOUBLE_EQ(c.widest_load_bytes(), 16);
  c.buffers = {{.name = "x", .loaded = 1600, .unique_loaded = 400}, {.name = "y", .unique_stored = 400}};
  EXPECT_DOUBLE_EQ(c.loaded_per_unique_byte(), 2.5);  // 1,600 loaded + 400 stored over 800 unique
  Workload w{.unique_bytes = 1000};
  apply_counters(w, c);
  EXPECT_EQ(w.loaded_bytes, 2500u);
  EXPECT_DOUBLE_EQ(w.bytes_in_flight, 16);
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
