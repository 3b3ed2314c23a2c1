// Bugs the simulator reports (early exit, divergent barriers and simd functions,
// uninitialised threadgroup memory), how it keeps going after one, and builtins.
#include <bit>
#include <cstdio>
#include <map>

#include "sim_test_util.h"
// clang-format off
#include <kernels/checks.metal>  // the simulator copy (see mtlsim_prepare_msl)
// clang-format on

namespace {

using namespace mtlsim;
using Kind = SimIssue::Kind;

int mark(const char* name) { return test::line_of("checks.metal", std::string("MARK:") + name); }

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

struct OutArgs {
  float* out;
  uint n;
};

void launch_early_exit(const ThreadContext& tc, void* user) {
  auto& a = *static_cast<OutArgs*>(user);
  early_exit(a.out, a.n, static_cast<float*>(tc.threadgroup_memory[0]), tc.thread_index_in_threadgroup);
}

class EarlyExitTest : public ::testing::TestWithParam<LaneOrder> {};

TEST_P(EarlyExitTest, ReportsReturnBeforeBarrierWithLine) {
  std::vector<float> out(128);
  OutArgs args{out.data(), 100};
  DispatchOptions o = test::grid_1d(2, 128, "early_exit");
  o.threadgroup_arrays = {{128 * sizeof(float), {}}};
  o.order = GetParam();
  const DispatchResult r = dispatch(o, launch_early_exit, &args);
  ASSERT_EQ(r.issues_total, 2u) << test::describe(r);
  const SimIssue& i = r.issues[0];
  EXPECT_EQ(i.kind, Kind::barrier_early_exit);
  EXPECT_EQ(i.line, mark("early_exit_barrier"));
  EXPECT_EQ(i.thread_index, 100u);
  EXPECT_TRUE(contains(i.message, "kernel 'early_exit'")) << i.message;
  EXPECT_TRUE(contains(i.message, "threads 100-127 returned before threadgroup_barrier at line " +
                                      std::to_string(i.line) + ", which threads 0-99 reached"))
      << i.message;
  std::printf("example report: %s\n", i.message.c_str());
}

INSTANTIATE_TEST_SUITE_P(Orders, EarlyExitTest, ::testing::ValuesIn(test::kAllOrders));

void launch_divergent_barriers(const ThreadContext& tc, void* user) {
  divergent_barriers(static_cast<OutArgs*>(user)->out, tc.thread_index_in_threadgroup);
}

TEST(Checks, BarriersOnDifferentLines) {
  std::vector<float> out(128);
  OutArgs args{out.data(), 0};
  const DispatchResult r = dispatch(test::grid_1d(1, 128, "divergent_barriers"), launch_divergent_barriers, &args);
  ASSERT_EQ(r.issues_total, 1u);
  const SimIssue& i = r.issues[0];
  EXPECT_EQ(i.kind, Kind::barrier_divergence);
  const std::string a = std::to_string(mark("barrier_a")), b = std::to_string(mark("barrier_b"));
  EXPECT_TRUE(contains(i.message, "threads 0-63 wait at threadgroup_barrier (line " + a + ")")) << i.message;
  EXPECT_TRUE(contains(i.message, "threads 64-127 wait at threadgroup_barrier (line " + b + ")")) << i.message;
  std::printf("example report: %s\n", i.message.c_str());
}

void launch_divergent_simd(const ThreadContext& tc, void* user) {
  divergent_simd(static_cast<OutArgs*>(user)->out, tc.thread_index_in_threadgroup, tc.thread_index_in_simdgroup);
}

TEST(Checks, SimdFunctionsOnDifferentLines) {
  std::vector<float> out(64);
  OutArgs args{out.data(), 0};
  const DispatchResult r = dispatch(test::grid_1d(1, 64, "divergent_simd"), launch_divergent_simd, &args);
  ASSERT_GE(r.issues_total, 1u);
  const SimIssue& i = r.issues[0];
  EXPECT_EQ(i.kind, Kind::simd_divergence);
  EXPECT_TRUE(contains(i.message, "threads 0-15 wait at simd_sum (line " + std::to_string(mark("simd_a")) + ")"))
      << i.message;
  EXPECT_TRUE(contains(i.message, "threads 16-31 wait at simd_max (line " + std::to_string(mark("simd_b")) + ")"))
      << i.message;
}

void launch_simd_vs_barrier(const ThreadContext& tc, void* user) {
  simd_vs_barrier(static_cast<OutArgs*>(user)->out, tc.thread_index_in_threadgroup, tc.thread_index_in_simdgroup);
}

TEST(Checks, SomeLanesAtSimdFunctionOthersAtBarrier) {
  std::vector<float> out(64);
  OutArgs args{out.data(), 0};
  for (LaneOrder order : test::kAllOrders) {
    DispatchOptions o = test::grid_1d(1, 64, "simd_vs_barrier");
    o.order = order;
    const DispatchResult r = dispatch(o, launch_simd_vs_barrier, &args);
    ASSERT_EQ(r.issues_total, 1u) << to_string(order);
    const SimIssue& i = r.issues[0];
    EXPECT_EQ(i.kind, Kind::simd_divergence);
    EXPECT_EQ(i.line, mark("simd_partial"));
    EXPECT_TRUE(contains(i.message, "threads 0-7 wait at simd_sum (line " + std::to_string(mark("simd_partial"))))
        << i.message;
    EXPECT_TRUE(contains(i.message, "threads 8-31 wait at threadgroup_barrier (line " +
                                        std::to_string(mark("after_partial"))))
        << i.message;
  }
}

template <class T>
void launch_uninit(const ThreadContext& tc, void* user) {
  uninit_read<T>(static_cast<OutArgs*>(user)->out, static_cast<T*>(tc.threadgroup_memory[0]),
                 tc.thread_index_in_threadgroup, tc.thread_index_in_simdgroup);
}

TEST(Checks, UninitialisedThreadgroupMemoryReachingSimdSum) {
  std::vector<float> out(64);
  OutArgs args{out.data(), 0};
  DispatchOptions o = test::grid_1d(1, 64, "uninit_read_f32");
  o.threadgroup_arrays = {{32 * sizeof(float), {}}};
  DispatchResult r = dispatch(o, launch_uninit<float>, &args);
  // Not an issue: the run goes on, and every lane's sum carries the poison to the output.
  EXPECT_TRUE(r.ok()) << test::describe(r);
  ASSERT_EQ(r.poison_flows.size(), 1u);
  const SimIssue& f = r.poison_flows[0];
  EXPECT_EQ(f.kind, Kind::poison_in_collective);
  EXPECT_EQ(f.line, mark("uninit_sum"));
  EXPECT_EQ(f.receivers, 32u);
  EXPECT_TRUE(contains(f.message, "simd_sum at line " + std::to_string(mark("uninit_sum")) +
                                      " received uninitialised threadgroup memory"))
      << f.message;
  EXPECT_TRUE(contains(f.message, "0x7FC0DEAD")) << f.message;
  for (uint i = 0; i < 64; ++i) EXPECT_EQ(std::bit_cast<uint32_t>(out[i]), poison_bits_f32()) << i;
  std::printf("example report: %s\n", f.message.c_str());

  o.kernel_name = "uninit_read_f16";
  o.threadgroup_arrays = {{32 * sizeof(half), poison_pattern_f16()}};
  r = dispatch(o, launch_uninit<half>, &args);
  ASSERT_EQ(r.poison_flows.size(), 1u);
  EXPECT_TRUE(contains(r.poison_flows[0].message, "0x7EAD")) << r.poison_flows[0].message;
}

void launch_poison_lanes(const ThreadContext& tc, void* user) {
  poison_lanes(static_cast<float*>(user), static_cast<float*>(tc.threadgroup_memory[0]), tc.thread_index_in_simdgroup);
}

// Poison reaches the lanes whose results depend on it and no others: a prefix sum's later lanes,
// every lane of a max (which would otherwise swallow the NaN), no lane of a shuffle whose sources
// were written.
TEST(Checks, PoisonReachesOnlyTheLanesWhoseResultsDependOnIt) {
  std::vector<float> out(96);
  DispatchOptions o = test::grid_1d(1, 32, "poison_lanes");
  o.threadgroup_arrays = {{32 * sizeof(float), {}}};
  const DispatchResult r = dispatch(o, launch_poison_lanes, out.data());
  EXPECT_TRUE(r.ok()) << test::describe(r);
  auto poisoned = [&](uint i) { return std::bit_cast<uint32_t>(out[i]) == poison_bits_f32(); };
  float sum = 0;
  for (uint l = 0; l < 32; ++l) {
    if (l <= 8) EXPECT_EQ(out[l], sum) << "prefix lane " << l;
    else EXPECT_TRUE(poisoned(l)) << "prefix lane " << l;
    sum += l < 8 ? float(l) : 0.0f;
    EXPECT_TRUE(poisoned(32 + l)) << "max lane " << l;
    EXPECT_EQ(out[64 + l], float(l % 8)) << "shuffle lane " << l;
  }
  ASSERT_EQ(r.poison_flows.size(), 3u);
  std::map<int, uint32_t> receivers;
  for (const SimIssue& f : r.poison_flows) receivers[f.line] = f.receivers;
  EXPECT_EQ(receivers[mark("poison_prefix")], 23u);
  EXPECT_EQ(receivers[mark("poison_max")], 32u);
  EXPECT_EQ(receivers[mark("poison_shuffle")], 0u);
}

TEST(Checks, ZeroFilledThreadgroupMemoryIsNotPoison) {
  std::vector<float> out(32);
  OutArgs args{out.data(), 0};
  DispatchOptions o = test::grid_1d(1, 32, "uninit_read_f32");
  o.threadgroup_arrays = {{32 * sizeof(float), {0}}};
  const DispatchResult r = dispatch(o, launch_uninit<float>, &args);
  EXPECT_TRUE(r.ok()) << test::describe(r);
  EXPECT_EQ(out[0], 32.0f);
}

void launch_one_bad_group(const ThreadContext& tc, void* user) {
  auto& a = *static_cast<OutArgs*>(user);
  one_bad_group(a.out, a.n, tc.threadgroup_position_in_grid.x, tc.thread_index_in_threadgroup,
                tc.thread_position_in_grid.x);
}

TEST(Checks, OtherThreadgroupsKeepRunningAfterAnIssue) {
  const uint groups = 16, tg = 64;
  std::vector<float> out(groups * tg, 0.0f);
  OutArgs args{out.data(), 5};
  DispatchOptions o = test::grid_1d(groups, tg, "one_bad_group");
  o.workers = 2;
  const DispatchResult r = dispatch(o, launch_one_bad_group, &args);
  ASSERT_EQ(r.issues_total, 1u);
  EXPECT_EQ(r.issues[0].threadgroup_position, (Dim3{5, 0, 0}));
  EXPECT_EQ(r.issues[0].thread_index, 3u);
  EXPECT_EQ(r.threadgroups_run, groups);
  for (uint g = 0; g < groups; ++g)
    for (uint t = 0; t < tg; ++t)
      if (g != 5) {
        EXPECT_EQ(out[g * tg + t], 1.0f) << g << " " << t;
      }
}

TEST(Checks, IssuesAreCapped) {
  const uint groups = 64;
  std::vector<float> out(groups * 128);
  OutArgs args{out.data(), 100};
  DispatchOptions o = test::grid_1d(groups, 128, "early_exit");
  o.threadgroup_arrays = {{128 * sizeof(float), {}}};
  o.workers = 2;
  const DispatchResult r = dispatch(o, launch_early_exit, &args);
  EXPECT_EQ(r.issues.size(), 20u);
  EXPECT_EQ(r.issues_total, groups);
  EXPECT_EQ(r.threadgroups_run, groups);
}

struct TreeArgs {
  const float* x;
  float* out;
};
void launch_tree_sum(const ThreadContext& tc, void* user) {
  auto& a = *static_cast<TreeArgs*>(user);
  tree_sum(a.x, a.out, static_cast<float*>(tc.threadgroup_memory[0]), tc.threadgroup_position_in_grid.x,
           tc.thread_index_in_threadgroup, tc.thread_position_in_grid.x, tc.threads_per_threadgroup.x);
}

// Runs tree_sum over `x` (groups threadgroups of tg threads) in `order` and checks each sum;
// `workers` 0: the dispatch's default.
void expect_tree_sums(const std::vector<float>& x, uint groups, uint tg, LaneOrder order, uint workers,
                      const std::string& where) {
  std::vector<float> out(groups);
  TreeArgs args{x.data(), out.data()};
  DispatchOptions o = test::grid_1d(groups, tg, "tree_sum");
  o.threadgroup_arrays = {{tg * sizeof(float), {}}};
  o.order = order;
  if (workers != 0) o.workers = workers;
  const DispatchResult r = dispatch(o, launch_tree_sum, &args);
  ASSERT_TRUE(r.ok()) << where << ": " << test::describe(r);
  for (uint g = 0; g < groups; ++g) {
    float want = 0;
    for (uint t = 0; t < tg; ++t) want += x[g * tg + t];
    EXPECT_EQ(out[g], want) << where << ", threadgroup " << g << ", order " << to_string(order);
  }
}

TEST(Checks, BarrierInLoopIsFineInEveryOrder) {
  const uint groups = 6, tg = 256;
  std::vector<float> x(groups * tg);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i % 31);
  for (LaneOrder order : test::kAllOrders) expect_tree_sums(x, groups, tg, order, 0, "default workers");
}

// One worker, one thread: the runners a dispatch parks on its freed stacks start the threads of
// the next, whether the dispatch before ended normally or abandoned threadgroups with threads
// still suspended on their stacks (early_exit: threads 0-99 wait at the barrier when it reports).
TEST(Checks, WorkerRunsOnAfterAbandonedThreadgroups) {
  const uint groups = 3, tg = 128;
  std::vector<float> x(groups * tg);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i % 29);
  for (int round = 0; round < 3; ++round) {
    std::vector<float> bad(groups * tg);
    OutArgs bad_args{bad.data(), 100};
    DispatchOptions e = test::grid_1d(groups, tg, "early_exit");
    e.threadgroup_arrays = {{tg * sizeof(float), {}}};
    e.workers = 1;
    const DispatchResult abandoned = dispatch(e, launch_early_exit, &bad_args);
    ASSERT_EQ(abandoned.issues_total, groups) << test::describe(abandoned);
    for (LaneOrder order : test::kAllOrders) expect_tree_sums(x, groups, tg, order, 1, "round " + std::to_string(round));
  }
}

void launch_builtins(const ThreadContext& tc, void* user) {
  builtins_3d(static_cast<uint*>(user), as_builtin<uint3>(tc.thread_position_in_grid),
              as_builtin<ushort3>(tc.thread_position_in_threadgroup),
              as_builtin<uint3>(tc.threadgroup_position_in_grid), as_builtin<uint3>(tc.threads_per_grid),
              as_builtin<ushort>(tc.thread_index_in_threadgroup), tc.simdgroup_index_in_threadgroup,
              tc.thread_index_in_simdgroup);
}

TEST(Checks, BuiltinsOf3dDispatch) {
  DispatchOptions o;
  o.threadgroups = {2, 3, 2};
  o.threads_per_threadgroup = {8, 3, 2};  // 48 threads: one full and one partial simdgroup
  o.kernel_name = "builtins_3d";
  const uint gx = 16, gy = 9, gz = 4;
  std::vector<uint> out(gx * gy * gz * 6, 0xffffffffu);
  ASSERT_TRUE(dispatch(o, launch_builtins, out.data()).ok());
  for (uint z = 0; z < gz; ++z)
    for (uint y = 0; y < gy; ++y)
      for (uint x = 0; x < gx; ++x) {
        const uint* r = &out[(x + gx * (y + gy * z)) * 6];
        const uint tx = x % 8, ty = y % 3, tz = z % 2, index = tx + 8 * (ty + 3 * tz);
        EXPECT_EQ(r[0], x | (y << 8) | (z << 16));
        EXPECT_EQ(r[1], tx | (ty << 8) | (tz << 16));
        EXPECT_EQ(r[2], x / 8 | (y / 3 << 8) | (z / 2 << 16));
        EXPECT_EQ(r[3], index);
        EXPECT_EQ(r[4], index / 32);
        EXPECT_EQ(r[5], index % 32);
      }
}

TEST(Checks, ThreadgroupsRunCleanlyAfterAbandonedOnes) {
  // Abandoned threadgroups leave fibers stopped mid-kernel on the worker's stacks; the next
  // dispatches on the same workers must start those lanes afresh.
  for (int round = 0; round < 3; ++round) {
    std::vector<float> bad(128 * 8);
    OutArgs bad_args{bad.data(), 100};
    DispatchOptions o = test::grid_1d(8, 128, "early_exit");
    o.threadgroup_arrays = {{128 * sizeof(float), {}}};
    o.order = test::kAllOrders[round];
    EXPECT_EQ(dispatch(o, launch_early_exit, &bad_args).issues_total, 8u);

    std::vector<float> x(6 * 256, 1.0f), out(6);
    TreeArgs args{x.data(), out.data()};
    DispatchOptions good = test::grid_1d(6, 256, "tree_sum");
    good.threadgroup_arrays = {{256 * sizeof(float), {}}};
    const DispatchResult r = dispatch(good, launch_tree_sum, &args);
    ASSERT_TRUE(r.ok()) << test::describe(r);
    for (float v : out) EXPECT_EQ(v, 256.0f);
  }
}

struct WhoArgs {
  uint* out;
  std::vector<uint32_t>* seen;
};
void launch_who_am_i(const ThreadContext& tc, void* user) {
  auto& a = *static_cast<WhoArgs*>(user);
  const ThreadContext* current = current_thread_context();
  if (current == &tc) a.seen->at(tc.thread_position_in_grid.x) = current->thread_index_in_threadgroup;
  who_am_i(a.out, tc.thread_position_in_grid.x);
}

TEST(Checks, CurrentThreadContextNamesTheRunningThread) {
  std::vector<uint> out(64);
  std::vector<uint32_t> seen(64, 999);
  WhoArgs args{out.data(), &seen};
  ASSERT_TRUE(dispatch(test::grid_1d(2, 32, "who_am_i"), launch_who_am_i, &args).ok());
  for (uint i = 0; i < 64; ++i) EXPECT_EQ(seen[i], i % 32);
  EXPECT_EQ(current_thread_context(), nullptr);
}

TEST(ChecksDeathTest, CollectiveOutsideDispatchAborts) {
  EXPECT_DEATH(simd_sum(1.0f), "simd_sum at line [0-9]+ called outside mtlsim::dispatch");
}

TEST(Checks, InvalidDispatchesThrow) {
  std::vector<uint> out(64);
  DispatchOptions o = test::grid_1d(1, 2048, "too_big");
  EXPECT_THROW(dispatch(o, launch_builtins, out.data()), std::invalid_argument);
  o = test::grid_1d(0, 32, "empty");
  EXPECT_THROW(dispatch(o, launch_builtins, out.data()), std::invalid_argument);
}

}  // namespace
