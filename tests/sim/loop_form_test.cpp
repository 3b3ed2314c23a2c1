// The loop form (issue 17 item 2) against the fiber path on the same kernels: the same
// interleaving of threads in every lane order, the same poison reports, the same race symptoms.
#include "sim_test_util.h"

// clang-format off
#include <kernels/loop_form.metal>  // the simulator copy (see mtlsim_prepare_msl)
#include <loop_form_loops.inc>      // its loop form (mtlgen_loop_forms)
// clang-format on

namespace {

using mtlsim::test::grid_1d;

struct TraceArgs {
  metal::atomic_uint* count;
  uint* trace;
};

void trace_thread(const mtlsim::ThreadContext& tc, void* user) {
  auto& a = *static_cast<TraceArgs*>(user);
  order_trace(a.count, a.trace, static_cast<float*>(tc.threadgroup_memory[0]), tc.thread_index_in_threadgroup,
              tc.thread_index_in_simdgroup, tc.simdgroup_index_in_threadgroup);
}

void trace_group(const mtlsim::detail::LoopRun& run, void* user) {
  auto& a = *static_cast<TraceArgs*>(user);
  const mtlsim::ThreadContext& tc = run.contexts[0];
  mtlsim_loops_order_trace(a.count, a.trace, static_cast<float*>(tc.threadgroup_memory[0]),
                           tc.thread_index_in_threadgroup, tc.thread_index_in_simdgroup,
                           tc.simdgroup_index_in_threadgroup, run);
}

struct Trace {
  std::vector<uint> points;
  mtlsim::DispatchResult result;
};

// 80 threads: two full simdgroups and a partial one.
Trace run_trace(mtlsim::LaneOrder order, bool loops) {
  std::vector<uint> trace(80 * 4 + 1, ~0u);
  metal::atomic_uint count{0};
  TraceArgs args{&count, trace.data()};
  mtlsim::DispatchOptions o = grid_1d(1, 80, "order_trace");
  o.threadgroup_arrays = {{3 * sizeof(float), {}}};
  o.order = order;
  o.seed = 7;
  o.workers = 1;
  o.group_fn = loops ? trace_group : nullptr;
  Trace t{{}, mtlsim::dispatch(o, trace_thread, &args)};
  t.points.assign(trace.begin(), trace.begin() + count.value);
  return t;
}

class LoopFormOrder : public ::testing::TestWithParam<mtlsim::LaneOrder> {};

TEST_P(LoopFormOrder, InterleavesThreadsAsTheFibersDo) {
  const Trace fibers = run_trace(GetParam(), false), loops = run_trace(GetParam(), true);
  ASSERT_TRUE(fibers.result.ok()) << mtlsim::test::describe(fibers.result);
  ASSERT_TRUE(loops.result.ok()) << mtlsim::test::describe(loops.result);
  EXPECT_EQ(fibers.result.threadgroups_as_loops, 0u);
  EXPECT_EQ(loops.result.threadgroups_as_loops, 1u);
  EXPECT_EQ(loops.points.size(), 80u * 3 + 1);
  EXPECT_EQ(loops.points, fibers.points);
}

INSTANTIATE_TEST_SUITE_P(Orders, LoopFormOrder, ::testing::ValuesIn(mtlsim::test::kAllOrders));

TEST(LoopForm, ExecFibersRunsFibers) {
  std::vector<uint> trace(80 * 4 + 1);
  metal::atomic_uint count{0};
  TraceArgs args{&count, trace.data()};
  mtlsim::DispatchOptions o = grid_1d(1, 80, "order_trace");
  o.threadgroup_arrays = {{3 * sizeof(float), {}}};
  o.group_fn = trace_group;
  o.exec = mtlsim::ExecPath::fibers;
  EXPECT_EQ(mtlsim::dispatch(o, trace_thread, &args).threadgroups_as_loops, 0u);
}

struct SumArgs {
  const float* x;
  float* out;
};

void sum_thread(const mtlsim::ThreadContext& tc, void* user) {
  auto& a = *static_cast<SumArgs*>(user);
  racy_sum(a.x, a.out, static_cast<float*>(tc.threadgroup_memory[0]), tc.threadgroup_position_in_grid.x,
           tc.thread_index_in_threadgroup, tc.thread_index_in_simdgroup, tc.simdgroup_index_in_threadgroup);
}

void sum_group(const mtlsim::detail::LoopRun& run, void* user) {
  auto& a = *static_cast<SumArgs*>(user);
  const mtlsim::ThreadContext& tc = run.contexts[0];
  mtlsim_loops_racy_sum(a.x, a.out, static_cast<float*>(tc.threadgroup_memory[0]), tc.threadgroup_position_in_grid.x,
                        tc.thread_index_in_threadgroup, tc.thread_index_in_simdgroup,
                        tc.simdgroup_index_in_threadgroup, run);
}

struct Sums {
  std::vector<float> out;
  mtlsim::DispatchResult result;
};

Sums run_sums(mtlsim::LaneOrder order, bool loops) {
  const std::vector<float> x = mtlsim::test::random_floats(4 * 64, 3);
  std::vector<float> out(4, 0.0f);
  SumArgs args{x.data(), out.data()};
  mtlsim::DispatchOptions o = grid_1d(4, 64, "racy_sum");
  o.threadgroup_arrays = {{32 * sizeof(float), {}}};
  o.order = order;
  o.workers = 1;
  o.group_fn = loops ? sum_group : nullptr;
  mtlsim::DispatchResult r = mtlsim::dispatch(o, sum_thread, &args);
  return {out, r};
}

TEST(LoopForm, PoisonInACollectiveIsReportedAlike) {
  const Sums fibers = run_sums(mtlsim::LaneOrder::forward, false), loops = run_sums(mtlsim::LaneOrder::forward, true);
  const int line = mtlsim::test::line_of("loop_form.metal", "MARK:poisoned_sum");
  ASSERT_FALSE(fibers.result.poison_flows.empty());
  ASSERT_EQ(loops.result.poison_flows.size(), fibers.result.poison_flows.size());
  EXPECT_EQ(loops.result.poison_flows[0].line, line);
  EXPECT_EQ(loops.result.poison_flows[0].message, fibers.result.poison_flows[0].message);
  EXPECT_EQ(loops.result.threadgroups_as_loops, 4u);
}

TEST(LoopForm, AMissingBarrierShowsInTheLaneOrdersAlike) {
  for (bool loops : {false, true}) {
    const Sums forward = run_sums(mtlsim::LaneOrder::forward, loops), reverse = run_sums(mtlsim::LaneOrder::reverse, loops);
    EXPECT_NE(forward.out, reverse.out) << (loops ? "loops" : "fibers");
  }
  for (mtlsim::LaneOrder order : mtlsim::test::kAllOrders) {
    const Sums fibers = run_sums(order, false), loops = run_sums(order, true);
    for (size_t i = 0; i < fibers.out.size(); ++i)
      EXPECT_EQ(std::isnan(loops.out[i]) ? 0 : loops.out[i], std::isnan(fibers.out[i]) ? 0 : fibers.out[i]) << i;
  }
}

}  // namespace
