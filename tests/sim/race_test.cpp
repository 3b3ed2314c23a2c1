// The exact race detector (DispatchOptions::detect_races). This file is compiled with g++
// -fsanitize=thread but linked without libtsan: the runtime's __tsan_* entry points receive the
// kernels' memory accesses. Each kernel races or not depending on an argument (kernels/races.metal).
#include <cstdio>

#include "sim_test_util.h"
// clang-format off
#include <kernels/races.metal>  // the simulator copy (see mtlsim_prepare_msl)
// clang-format on

namespace {

using namespace mtlsim;

int mark(const char* name) { return test::line_of("races.metal", std::string("MARK:") + name); }

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

DispatchResult detect(DispatchOptions o, KernelThreadFn fn, void* args) {
  o.detect_races = true;
  DispatchResult r = dispatch(o, fn, args);
  EXPECT_TRUE(r.ok()) << test::describe(r);
  resolve_race_sources(r.races);
  return r;
}

std::string describe_races(const DispatchResult& r, const char* kernel_name) {
  std::string s;
  for (const DataRace& race : r.races) s += describe(race, kernel_name) + "\n";
  return s;
}

// ---- threadgroup memory ----

struct ExchangeArgs {
  float* out;
  uint mode;
};

void launch_exchange(const ThreadContext& tc, void* user) {
  auto& a = *static_cast<ExchangeArgs*>(user);
  neighbour_exchange(a.out, a.mode, static_cast<float*>(tc.threadgroup_memory[0]), tc.thread_index_in_threadgroup,
                     tc.threads_per_threadgroup.x, tc.thread_position_in_grid.x);
}

DispatchResult run_exchange(uint mode, uint threads, LaneOrder order) {
  std::vector<float> out(2 * threads);
  ExchangeArgs args{out.data(), mode};
  DispatchOptions o = test::grid_1d(2, threads, "neighbour_exchange");
  o.threadgroup_arrays = {{threads * sizeof(float), {}, "slots", sizeof(float)}};
  o.race_buffers = {{"out", out.data(), out.size() * sizeof(float), sizeof(float)}};
  o.order = order;
  return detect(o, launch_exchange, &args);
}

class ExchangeTest : public ::testing::TestWithParam<LaneOrder> {};

TEST_P(ExchangeTest, MissingBarrierIsReportedWithBothLines) {
  const DispatchResult r = run_exchange(0, 64, GetParam());
  ASSERT_EQ(r.races.size(), 1u) << describe_races(r, "neighbour_exchange");
  const DataRace& race = r.races[0];
  EXPECT_EQ(race.memory, "slots");
  EXPECT_TRUE(race.threadgroup_memory);
  EXPECT_TRUE(race.same_threadgroup());
  EXPECT_FALSE(race.barrier_without_flags);
  // The example pair is one that crosses simdgroups, so the fix covers every occurrence.
  EXPECT_NE(race.earlier.thread_index / 32, race.later.thread_index / 32);
  // One access writes at the first line, the other reads at the second, whichever ran first.
  const RaceAccess& w = race.earlier.write ? race.earlier : race.later;
  const RaceAccess& rd = race.earlier.write ? race.later : race.earlier;
  EXPECT_TRUE(w.write && !rd.write);
  EXPECT_EQ(w.line, mark("exchange_write"));
  EXPECT_EQ(rd.line, mark("exchange_read"));
  EXPECT_EQ((rd.thread_index + 1) % 64, w.thread_index);  // the neighbour's slot
  EXPECT_EQ(race.element, w.thread_index);
  EXPECT_EQ(race.occurrences, 128u);  // every thread of both threadgroups, reported once
  const std::string text = describe(race, "neighbour_exchange");
  EXPECT_TRUE(contains(text, "threadgroup array `slots`")) << text;
  EXPECT_TRUE(contains(text, "of the same threadgroup")) << text;
  EXPECT_TRUE(contains(text, "threadgroup_barrier(mem_flags::mem_threadgroup) between the ")) << text;
  std::printf("example report: %s\n", text.c_str());
}

TEST_P(ExchangeTest, BarrierWithThreadgroupFlagOrders) {
  const DispatchResult r = run_exchange(1, 64, GetParam());
  EXPECT_EQ(r.races_total, 0u) << describe_races(r, "neighbour_exchange");
}

INSTANTIATE_TEST_SUITE_P(Orders, ExchangeTest, ::testing::ValuesIn(test::kAllOrders));

TEST(Races, BarrierWithoutThreadgroupFlagDoesNotOrderThreadgroupMemory) {
  const DispatchResult r = run_exchange(2, 64, LaneOrder::forward);
  ASSERT_EQ(r.races.size(), 1u) << describe_races(r, "neighbour_exchange");
  EXPECT_TRUE(r.races[0].barrier_without_flags);
  const std::string text = describe(r.races[0], "neighbour_exchange");
  EXPECT_TRUE(contains(text, "mem_flags do not include mem_flags::mem_threadgroup")) << text;
}

TEST(Races, SimdgroupBarrierOrdersItsSimdgroupOnly) {
  EXPECT_EQ(run_exchange(3, 32, LaneOrder::forward).races_total, 0u);
  const DispatchResult r = run_exchange(3, 64, LaneOrder::forward);
  ASSERT_EQ(r.races.size(), 1u) << describe_races(r, "neighbour_exchange");
  // Only threads 31 and 63 read a slot of another simdgroup.
  const DataRace& race = r.races[0];
  EXPECT_NE(race.earlier.thread_index / 32, race.later.thread_index / 32);
  EXPECT_EQ(race.occurrences, 4u);  // 2 threadgroups x threads 31 and 63
}

TEST(Races, NoBarrierInOneSimdgroupSuggestsSimdgroupBarrier) {
  const DispatchResult r = run_exchange(0, 32, LaneOrder::reverse);
  ASSERT_EQ(r.races.size(), 1u);
  const std::string text = describe(r.races[0], "neighbour_exchange");
  EXPECT_TRUE(contains(text, "simdgroup_barrier(mem_flags::mem_threadgroup)")) << text;
}

// ---- many readers, one writer ----

struct ReadersArgs {
  float* out;
  uint writer, mode;
};

void launch_readers(const ThreadContext& tc, void* user) {
  auto& a = *static_cast<ReadersArgs*>(user);
  readers_then_writer(a.out, a.writer, a.mode, static_cast<float*>(tc.threadgroup_memory[0]),
                      tc.thread_index_in_threadgroup, tc.thread_position_in_grid.x);
}

// The detector keeps two reads per element; the late write must race with some reader whichever
// thread writes and in whatever order the readers ran.
TEST(Races, WriteAfterManyReadsRacesWithAnotherReader) {
  for (LaneOrder order : test::kAllOrders) {
    for (uint writer : {0u, 1u, 31u, 32u, 127u}) {
      std::vector<float> out(128);
      ReadersArgs args{out.data(), writer, 0};
      DispatchOptions o = test::grid_1d(1, 128, "readers_then_writer");
      o.threadgroup_arrays = {{sizeof(float), {}, "shared", sizeof(float)}};
      o.order = order;
      const DispatchResult r = detect(o, launch_readers, &args);
      ASSERT_EQ(r.races.size(), 1u) << "writer " << writer << " order " << to_string(order);
      const DataRace& race = r.races[0];
      const RaceAccess& w = race.earlier.write ? race.earlier : race.later;
      EXPECT_EQ(w.thread_index, writer);
      EXPECT_EQ(w.line, mark("late_write"));
      EXPECT_EQ((race.earlier.write ? race.later : race.earlier).line, mark("readers"));
      args.mode = 1;  // a barrier after the reads
      EXPECT_EQ(detect(o, launch_readers, &args).races_total, 0u) << "writer " << writer;
    }
  }
}

// ---- device memory ----

struct AccumulateArgs {
  float value;
  uint mode;
};

void launch_accumulate(const ThreadContext& tc, void* user) {
  auto& a = *static_cast<AccumulateArgs*>(user);
  accumulate(&a.value, reinterpret_cast<atomic_float*>(&a.value), a.mode, tc.thread_index_in_threadgroup);
}

TEST(Races, ThreadgroupsAreNeverOrdered) {
  AccumulateArgs args{0, 0};
  DispatchOptions o = test::grid_1d(4, 32, "accumulate");
  o.race_buffers = {{"out", &args.value, sizeof(float), sizeof(float)}};
  const DispatchResult r = detect(o, launch_accumulate, &args);
  // Outputs cannot tell: threadgroups run one after another, so the plain sum comes out right.
  EXPECT_EQ(args.value, 4.0f);
  ASSERT_EQ(r.races.size(), 1u);
  const DataRace& race = r.races[0];
  EXPECT_FALSE(race.same_threadgroup());
  EXPECT_EQ(race.earlier.line, mark("accumulate_plain"));
  EXPECT_EQ(race.later.line, mark("accumulate_plain"));
  const std::string text = describe(race, "accumulate");
  EXPECT_TRUE(contains(text, "never ordered")) << text;
  EXPECT_TRUE(contains(text, "buffer `out`")) << text;
  std::printf("example report: %s\n", text.c_str());
}

TEST(Races, AtomicsDoNotRace) {
  AccumulateArgs args{0, 1};
  DispatchOptions o = test::grid_1d(4, 32, "accumulate");
  o.race_buffers = {{"out", &args.value, sizeof(float), sizeof(float)}};
  const DispatchResult r = detect(o, launch_accumulate, &args);
  EXPECT_EQ(args.value, 4.0f);
  EXPECT_EQ(r.races_total, 0u) << describe_races(r, "accumulate");
}

struct BroadcastArgs {
  float* shared;
  float* out;
  uint flags;
};

void launch_broadcast(const ThreadContext& tc, void* user) {
  auto& a = *static_cast<BroadcastArgs*>(user);
  broadcast_device(a.shared, a.out, a.flags, tc.threadgroup_position_in_grid.x, tc.thread_index_in_threadgroup,
                   tc.thread_position_in_grid.x);
}

TEST(Races, DeviceMemoryNeedsMemDevice) {
  std::vector<float> shared(2), out(128);
  for (uint flags : {uint(mem_flags::mem_device), uint(mem_flags::mem_threadgroup)}) {
    BroadcastArgs args{shared.data(), out.data(), flags};
    DispatchOptions o = test::grid_1d(2, 64, "broadcast_device");
    o.race_buffers = {{"shared", shared.data(), shared.size() * sizeof(float), sizeof(float)},
                      {"out", out.data(), out.size() * sizeof(float), sizeof(float)}};
    const DispatchResult r = detect(o, launch_broadcast, &args);
    if (flags == mem_flags::mem_device) {
      EXPECT_EQ(r.races_total, 0u) << describe_races(r, "broadcast_device");
      continue;
    }
    ASSERT_EQ(r.races.size(), 1u);
    const DataRace& race = r.races[0];
    EXPECT_EQ(race.memory, "shared");
    EXPECT_TRUE(race.barrier_without_flags);
    EXPECT_EQ(race.earlier.line, mark("broadcast_write"));
    EXPECT_EQ(race.later.line, mark("broadcast_read"));
    EXPECT_TRUE(contains(describe(race, "broadcast_device"), "threadgroup_barrier(mem_flags::mem_device)"));
  }
}

void launch_bytes(const ThreadContext& tc, void* user) {
  byte_stores(static_cast<uchar*>(user), tc.thread_position_in_grid.x);
}

// The granule is the element size the caller declares.
TEST(Races, ElementSizeIsTheGranule) {
  std::vector<uchar> out(64);
  DispatchOptions o = test::grid_1d(1, 64, "byte_stores");
  o.race_buffers = {{"out", out.data(), out.size(), 1}};
  EXPECT_EQ(detect(o, launch_bytes, out.data()).races_total, 0u);
  o.race_buffers[0].element_size = 4;
  EXPECT_EQ(detect(o, launch_bytes, out.data()).races.size(), 1u);
}

struct OneResultArgs {
  uint* out;
  uint same;
};

void launch_one_result(const ThreadContext& tc, void* user) {
  auto& a = *static_cast<OneResultArgs*>(user);
  one_result(a.out, a.same, tc.thread_position_in_grid.x);
}

// Unordered stores of the same value are benign unless asked for; of other values they race.
TEST(Races, SameValueStoresAreBenignUnlessReportingIsAsked) {
  uint out = 0;
  DispatchOptions o = test::grid_1d(2, 64, "one_result");
  o.race_buffers = {{"out", &out, sizeof out, sizeof out}};
  OneResultArgs same{&out, 1}, different{&out, 0};
  EXPECT_EQ(detect(o, launch_one_result, &same).races_total, 0u);
  const DispatchResult r = detect(o, launch_one_result, &different);
  ASSERT_EQ(r.races.size(), 1u);
  EXPECT_TRUE(r.races[0].earlier.write && r.races[0].later.write);
  EXPECT_EQ(r.races[0].later.line, test::line_of("races.metal", "MARK:one_result"));
  o.report_same_value_stores = true;
  EXPECT_EQ(detect(o, launch_one_result, &same).races.size(), 1u);
}

// ---- threadgroup variables declared in the body ----

struct VariableArgs {
  float* out;
  uint mode;
};

void launch_variable_exchange(const ThreadContext& tc, void* user) {
  auto& a = *static_cast<VariableArgs*>(user);
  variable_exchange(a.out, a.mode, tc.thread_index_in_threadgroup, tc.thread_position_in_grid.x);
}

class VariableRaceTest : public ::testing::TestWithParam<LaneOrder> {};

TEST_P(VariableRaceTest, MissingBarrierOverAVariableIsReportedByName) {
  std::vector<float> out(3 * 64);
  VariableArgs args{out.data(), 0};
  DispatchOptions o = test::grid_1d(3, 64, "variable_exchange");
  o.order = GetParam();
  const DispatchResult r = detect(o, launch_variable_exchange, &args);
  ASSERT_EQ(r.races.size(), 1u) << describe_races(r, "variable_exchange");
  const DataRace& race = r.races[0];
  EXPECT_EQ(race.memory, "sums");
  EXPECT_TRUE(race.threadgroup_memory);
  EXPECT_TRUE(race.threadgroup_variable);
  EXPECT_TRUE(race.same_threadgroup());
  const RaceAccess& w = race.earlier.write ? race.earlier : race.later;
  const RaceAccess& rd = race.earlier.write ? race.later : race.earlier;
  EXPECT_EQ(w.line, mark("variable_write"));
  EXPECT_EQ(rd.line, mark("variable_read"));
  EXPECT_EQ(race.element, w.thread_index);
  EXPECT_EQ(race.occurrences, 3u * 64u);  // every thread of every threadgroup: fresh per threadgroup
  const std::string text = describe(race, "variable_exchange");
  EXPECT_TRUE(contains(text, "threadgroup variable `sums`")) << text;
  EXPECT_TRUE(contains(text, "threadgroup_barrier(mem_flags::mem_threadgroup) between the ")) << text;
  std::printf("example report: %s\n", text.c_str());

  args.mode = 1;
  const DispatchResult ordered = detect(o, launch_variable_exchange, &args);
  EXPECT_EQ(ordered.races_total, 0u) << describe_races(ordered, "variable_exchange");
}

INSTANTIATE_TEST_SUITE_P(Orders, VariableRaceTest, ::testing::ValuesIn(test::kAllOrders));

// Without detect_races the instrumented kernel runs unchecked, also on several workers.
TEST(Races, OffByDefault) {
  AccumulateArgs args{0, 1};
  DispatchOptions o = test::grid_1d(64, 32, "accumulate");
  o.workers = 2;
  const DispatchResult r = dispatch(o, launch_accumulate, &args);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.races_total, 0u);
  EXPECT_EQ(args.value, 64.0f);
}

}  // namespace
