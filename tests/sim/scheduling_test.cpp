// The scheduler: threads that never block run as plain calls (no fiber switch), a simdgroup
// released from a simd function runs on before other threads, barriers release in lane order,
// and a thread's private memory survives while others run on reused stacks.
#include <vector>

#include "sim_test_util.h"
// clang-format off
#include <kernels/scheduling.metal>  // the simulator copy (see mtlsim_prepare_msl)
// clang-format on

namespace scheduling_test {  // named: unity builds (tests/CMakeLists.txt)

using namespace mtlsim;

struct TwoBuffers {
  const float* x;
  float* y;
};

void launch_scale(const ThreadContext& tc, void* user) {
  auto& a = *static_cast<TwoBuffers*>(user);
  scale(a.x, a.y, tc.thread_position_in_grid.x);
}

TEST(Scheduling, ThreadsThatNeverBlockRunAsPlainCalls) {
  const std::vector<float> x = test::random_floats(4 * 256, 1);
  std::vector<float> y(x.size());
  TwoBuffers args{x.data(), y.data()};
  DispatchOptions o = test::grid_1d(4, 256, "scale");
  o.workers = 1;
  const DispatchResult r = dispatch(o, launch_scale, &args);
  ASSERT_TRUE(r.ok()) << test::describe(r);
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(y[i], 2.0f * x[i]) << i;
  // Into the threadgroup's one stack and back out, per threadgroup.
  EXPECT_EQ(r.fiber_switches, 4u * 2u);
}

void launch_first_simdgroup_sums(const ThreadContext& tc, void* user) {
  auto& a = *static_cast<TwoBuffers*>(user);
  first_simdgroup_sums(a.x, a.y, tc.thread_index_in_threadgroup, tc.simdgroup_index_in_threadgroup);
}

TEST(Scheduling, OnlyThreadsThatBlockCostSwitches) {
  const std::vector<float> x = test::random_floats(128, 2);
  std::vector<float> y(x.size());
  TwoBuffers args{x.data(), y.data()};
  DispatchOptions o = test::grid_1d(3, 128, "first_simdgroup_sums");
  o.workers = 1;
  const DispatchResult r = dispatch(o, launch_first_simdgroup_sums, &args);
  ASSERT_TRUE(r.ok()) << test::describe(r);
  float sum = 0.0f;
  for (int i = 0; i < 32; ++i) sum += x[i];
  for (int i = 0; i < 32; ++i) EXPECT_FLOAT_EQ(y[i], sum) << i;
  for (int i = 32; i < 128; ++i) EXPECT_EQ(y[i], x[i]) << i;
  // Per threadgroup: into the first stack; threads 0-30 block at simd_sum, each leaving for a
  // fresh stack (31); thread 31 completes it and returns, then threads 0-29 are resumed in turn,
  // each after the one before returned (1 + 30); thread 30 returns and threads 32-127 run as
  // plain calls on its stack; out when all returned (1).
  EXPECT_EQ(r.fiber_switches, 3u * (1 + 31 + 1 + 30 + 1));
}

struct LogArgs {
  uint* log;
  uint* count;
};

void launch_log_steps(const ThreadContext& tc, void* user) {
  auto& a = *static_cast<LogArgs*>(user);
  log_steps(a.log, a.count, tc.thread_index_in_threadgroup);
}

std::vector<uint> run_log(LaneOrder order, uint64_t seed) {
  std::vector<uint> log(64 * 3, ~0u);
  uint count = 0;
  LogArgs args{log.data(), &count};
  DispatchOptions o = test::grid_1d(1, 64, "log_steps");
  o.workers = 1;
  o.order = order;
  o.seed = seed;
  const DispatchResult r = dispatch(o, launch_log_steps, &args);
  EXPECT_TRUE(r.ok()) << test::describe(r);
  EXPECT_EQ(count, 64u * 3);
  return log;
}

// What the scheduler promises, for threads listed in lane order `lanes` (two simdgroups):
// threads start in lane order; at a simd function the last thread of the simdgroup to arrive
// runs on and the others follow at once, in lane order, before threads yet to start; a barrier
// releases everyone in lane order.
std::vector<uint> expected_log(const std::vector<uint>& lanes) {
  std::vector<uint> want;
  for (uint sg : {lanes[0] / 32, 1 - lanes[0] / 32}) {
    std::vector<uint> mine;
    for (uint t : lanes)
      if (t / 32 == sg) mine.push_back(t);
    for (uint t : mine) want.push_back(t * 4 + 0);
    want.push_back(mine.back() * 4 + 1);
    for (size_t i = 0; i + 1 < mine.size(); ++i) want.push_back(mine[i] * 4 + 1);
  }
  for (uint t : lanes) want.push_back(t * 4 + 2);
  return want;
}

TEST(Scheduling, LaneOrderAtSimdFunctionsAndBarriers) {
  std::vector<uint> forward(64), reverse(64);
  for (uint i = 0; i < 64; ++i) forward[i] = i, reverse[i] = 63 - i;
  EXPECT_EQ(run_log(LaneOrder::forward, 0), expected_log(forward));
  EXPECT_EQ(run_log(LaneOrder::reverse, 0), expected_log(reverse));
}

TEST(Scheduling, ShuffledOrderIsDeterministicPerSeed) {
  const std::vector<uint> a = run_log(LaneOrder::shuffled, 5), b = run_log(LaneOrder::shuffled, 5);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, run_log(LaneOrder::shuffled, 6));
  EXPECT_NE(a, run_log(LaneOrder::forward, 0));
}

void launch_private_across_blocks(const ThreadContext& tc, void* user) {
  private_across_blocks(static_cast<float*>(user), tc.thread_index_in_threadgroup);
}

TEST(Scheduling, PrivateMemorySurvivesSuspension) {
  for (LaneOrder order : test::kAllOrders) {
    std::vector<float> out(1024);
    DispatchOptions o = test::grid_1d(3, 1024, "private_across_blocks");
    o.order = order;
    o.seed = 3;
    const DispatchResult r = dispatch(o, launch_private_across_blocks, out.data());
    ASSERT_TRUE(r.ok()) << test::describe(r);
    for (uint t = 0; t < 1024; ++t) {
      float want = 32.0f;
      for (uint i = 0; i < 64; ++i) want += float(t * 64 + i);
      ASSERT_EQ(out[t], want) << "thread " << t << " in order " << to_string(order);
    }
  }
}

}  // namespace scheduling_test
