// Threadgroup-wide reductions: correct ones match serial code in every lane order; a missing
// barrier is caught (poison reaching simd_sum) or shows up as order-dependent output.
#include <cmath>

#include "sim_test_util.h"
// clang-format off
#include <kernels/reduce.metal>  // the simulator copy (see mtlsim_prepare_msl)
// clang-format on

namespace {

using namespace mtlsim;
using mtlsim::test::grid_1d;

template <class T>
struct RowSumArgs {
  const T* x;
  float* out;
  uint n;
};

template <class T, uint TG>
void launch_row_sum(const ThreadContext& tc, void* user) {
  auto& a = *static_cast<RowSumArgs<T>*>(user);
  row_sum<T, TG>(a.x, a.out, a.n, static_cast<float*>(tc.threadgroup_memory[0]),
                 as_builtin<uint>(tc.threadgroup_position_in_grid),
                 as_builtin<uint>(tc.thread_position_in_threadgroup),
                 as_builtin<uint>(tc.thread_index_in_simdgroup),
                 as_builtin<uint>(tc.simdgroup_index_in_threadgroup));
}

void launch_row_sum_no_barrier(const ThreadContext& tc, void* user) {
  auto& a = *static_cast<RowSumArgs<float>*>(user);
  row_sum_no_barrier<256>(a.x, a.out, a.n, static_cast<float*>(tc.threadgroup_memory[0]),
                          tc.threadgroup_position_in_grid.x, tc.thread_position_in_threadgroup.x,
                          tc.thread_index_in_simdgroup, tc.simdgroup_index_in_threadgroup);
}

std::vector<float> serial_row_sums(const std::vector<float>& x, uint rows, uint n) {
  std::vector<float> out(rows);
  for (uint r = 0; r < rows; ++r) {
    double s = 0;
    for (uint i = 0; i < n; ++i) s += x[r * n + i];
    out[r] = float(s);
  }
  return out;
}

DispatchOptions row_sum_options(uint rows, uint tg, LaneOrder order, int workers) {
  DispatchOptions o = grid_1d(rows, tg, "row_sum_f32");
  o.threadgroup_arrays = {{tg / 32 * sizeof(float), {}}};
  o.order = order;
  o.seed = 7;
  o.workers = workers;
  return o;
}

class RowSumTest : public ::testing::TestWithParam<std::tuple<LaneOrder, int>> {};

TEST_P(RowSumTest, MatchesSerialSum) {
  const auto [order, workers] = GetParam();
  const uint rows = 37, n = 1000;
  const std::vector<float> x = test::random_floats(rows * n, 1);
  std::vector<float> out(rows, -1.0f);
  RowSumArgs<float> args{x.data(), out.data(), n};
  const DispatchResult r = dispatch(row_sum_options(rows, 256, order, workers), launch_row_sum<float, 256>, &args);
  ASSERT_TRUE(r.ok()) << test::describe(r);
  EXPECT_EQ(r.threadgroups_run, rows);
  EXPECT_GT(r.fiber_switches, rows * 256);
  const std::vector<float> want = serial_row_sums(x, rows, n);
  for (uint i = 0; i < rows; ++i) EXPECT_NEAR(out[i], want[i], 1e-4f) << "row " << i;
}

INSTANTIATE_TEST_SUITE_P(OrdersAndWorkers, RowSumTest,
                         ::testing::Combine(::testing::ValuesIn(test::kAllOrders), ::testing::Values(1, 2)));

TEST(RowSum, IdenticalBitsInEveryOrder) {
  const uint rows = 8, n = 4096;
  const std::vector<float> x = test::random_floats(rows * n, 2);
  std::vector<std::vector<float>> results;
  for (LaneOrder order : test::kAllOrders) {
    std::vector<float> out(rows);
    RowSumArgs<float> args{x.data(), out.data(), n};
    ASSERT_TRUE(dispatch(row_sum_options(rows, 256, order, 2), launch_row_sum<float, 256>, &args).ok());
    results.push_back(out);
  }
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0], results[2]);
}

TEST(RowSum, HalfInputs) {
  const uint rows = 3, n = 300;
  std::vector<half> x(rows * n);
  std::vector<float> xf(rows * n);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = half(float(i % 17) * 0.25f);
    xf[i] = float(x[i]);
  }
  std::vector<float> out(rows);
  RowSumArgs<half> args{x.data(), out.data(), n};
  ASSERT_TRUE(dispatch(row_sum_options(rows, 128, LaneOrder::shuffled, 1), launch_row_sum<half, 128>, &args).ok());
  const std::vector<float> want = serial_row_sums(xf, rows, n);
  for (uint i = 0; i < rows; ++i) EXPECT_FLOAT_EQ(out[i], want[i]);
}

TEST(RowSum, MissingBarrierReportsPoisonInForwardOrder) {
  const uint rows = 4, n = 512;
  const std::vector<float> x = test::random_floats(rows * n, 3);
  std::vector<float> out(rows);
  RowSumArgs<float> args{x.data(), out.data(), n};
  DispatchOptions o = row_sum_options(rows, 256, LaneOrder::forward, 1);
  o.kernel_name = "row_sum_no_barrier";
  const DispatchResult r = dispatch(o, launch_row_sum_no_barrier, &args);
  EXPECT_TRUE(r.ok()) << test::describe(r);  // poison is followed, not an issue by itself
  ASSERT_EQ(r.poison_flows.size(), 1u) << test::describe(r);  // one per line
  const SimIssue& issue = r.poison_flows[0];
  EXPECT_EQ(issue.kind, SimIssue::Kind::poison_in_collective);
  EXPECT_EQ(issue.line, test::line_of("reduce.metal", "MARK:racy_simd_sum"));
  EXPECT_NE(issue.message.find("row_sum_no_barrier"), std::string::npos) << issue.message;
  EXPECT_NE(issue.message.find("simd_sum at line"), std::string::npos) << issue.message;
  EXPECT_NE(issue.message.find("uninitialised threadgroup memory"), std::string::npos) << issue.message;
  EXPECT_NE(issue.message.find("lane 1 (thread 1)"), std::string::npos) << issue.message;
}

struct RotateArgs {
  const float* x;
  float* out;
};
template <bool WithBarrier>
void launch_rotate(const ThreadContext& tc, void* user) {
  auto& a = *static_cast<RotateArgs*>(user);
  rotate_by_simdgroup<WithBarrier>(a.x, a.out, static_cast<float*>(tc.threadgroup_memory[0]),
                                   tc.thread_position_in_grid.x, tc.thread_position_in_threadgroup.x,
                                   tc.threads_per_threadgroup.x);
}

std::vector<float> run_rotate(KernelThreadFn fn, LaneOrder order) {
  const uint groups = 4, tg = 128;
  const std::vector<float> x = test::random_floats(groups * tg, 4);
  std::vector<float> out(groups * tg);
  RotateArgs args{x.data(), out.data()};
  DispatchOptions o = grid_1d(groups, tg, "rotate");
  o.threadgroup_arrays = {{tg * sizeof(float), {}}};
  o.order = order;
  o.seed = 11;
  EXPECT_TRUE(dispatch(o, fn, &args).ok());
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(LaneOrder, CorrectKernelGivesIdenticalResults) {
  const std::vector<float> fwd = run_rotate(launch_rotate<true>, LaneOrder::forward);
  EXPECT_TRUE(same_bits(fwd, run_rotate(launch_rotate<true>, LaneOrder::reverse)));
  EXPECT_TRUE(same_bits(fwd, run_rotate(launch_rotate<true>, LaneOrder::shuffled)));
  for (float f : fwd) EXPECT_FALSE(std::isnan(f));
}

TEST(LaneOrder, MissingBarrierGivesOrderDependentResults) {
  const std::vector<float> fwd = run_rotate(launch_rotate<false>, LaneOrder::forward);
  const std::vector<float> rev = run_rotate(launch_rotate<false>, LaneOrder::reverse);
  const std::vector<float> shuf = run_rotate(launch_rotate<false>, LaneOrder::shuffled);
  EXPECT_FALSE(same_bits(fwd, rev));
  EXPECT_FALSE(same_bits(fwd, shuf));
  // Forward order reads neighbours before they are written: the poison NaN shows through.
  EXPECT_EQ(std::bit_cast<uint32_t>(fwd[0]), poison_bits_f32());
}

}  // namespace
