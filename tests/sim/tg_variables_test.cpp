// Threadgroup variables declared in kernel bodies (mtlsim::threadgroup_local): shared by the
// threads of one threadgroup, separate per threadgroup, poisoned or zeroed afresh for each, and
// held to Metal's 32 KiB. The race detector's view of them is tested in race_test.cpp.
#include <bit>
#include <cstdio>

#include "sim_test_util.h"
// clang-format off
#include <kernels/tg_variables.metal>  // the simulator copy (see mtlsim_prepare_msl)
// clang-format on

namespace tg_variables_test {  // named: unity builds (tests/CMakeLists.txt)

using namespace mtlsim;
using Kind = SimIssue::Kind;

int mark(const char* name) { return test::line_of("tg_variables.metal", std::string("MARK:") + name); }

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// ---- sharing ----

struct ShareArgs {
  float* out;
  uint* tag;
  uint* before;
};

void launch_share(const ThreadContext& tc, void* user) {
  auto& a = *static_cast<ShareArgs*>(user);
  share_within_threadgroup(a.out, a.tag, a.before, as_builtin<uint2>(tc.thread_position_in_threadgroup),
                           as_builtin<uint2>(tc.threadgroup_position_in_grid), as_builtin<uint2>(tc.threadgroups_per_grid),
                           tc.thread_index_in_threadgroup);
}

struct ShareResult {
  std::vector<float> out;
  std::vector<uint> tag, before;
  DispatchResult r;
};

ShareResult run_share(LaneOrder order, bool zeroed) {
  constexpr uint kGroups = 6;  // 3 x 2
  ShareResult s{std::vector<float>(kGroups * 64), std::vector<uint>(kGroups * 64), std::vector<uint>(kGroups), {}};
  ShareArgs args{s.out.data(), s.tag.data(), s.before.data()};
  DispatchOptions o;
  o.threadgroups = {3, 2, 1};
  o.threads_per_threadgroup = {16, 4, 1};
  o.kernel_name = "share_within_threadgroup";
  o.order = order;
  o.seed = 7;
  o.workers = 2;
  o.zero_threadgroup_variables = zeroed;
  s.r = dispatch(o, launch_share, &args);
  return s;
}

class ShareTest : public ::testing::TestWithParam<LaneOrder> {};

TEST_P(ShareTest, ThreadsOfOneThreadgroupShareEachVariable) {
  const ShareResult s = run_share(GetParam(), false);
  ASSERT_TRUE(s.r.ok()) << test::describe(s.r);
  for (uint tg = 0; tg < 6; ++tg) {
    for (uint i = 0; i < 64; ++i) {
      const uint gid = tg * 64 + i;
      // sums[63 - i] was written by thread 63 - i of this threadgroup; every tile slot holds tg.
      ASSERT_EQ(s.out[gid], float(tg * 64 + 63 - i) + 1000.0f * float(tg)) << "thread " << i << " of threadgroup " << tg;
      ASSERT_EQ(s.tag[gid], tg) << "thread " << i << " of threadgroup " << tg;
    }
    // Each threadgroup's scalar starts as poison, not as the previous threadgroup's value.
    EXPECT_EQ(s.before[tg], poison_bits_f32()) << "threadgroup " << tg;
  }
}

INSTANTIATE_TEST_SUITE_P(Orders, ShareTest, ::testing::ValuesIn(test::kAllOrders));

TEST(ThreadgroupVariables, ZeroedModeStartsEveryThreadgroupAtZero) {
  const ShareResult s = run_share(LaneOrder::forward, true);
  ASSERT_TRUE(s.r.ok()) << test::describe(s.r);
  for (uint tg = 0; tg < 6; ++tg) EXPECT_EQ(s.before[tg], 0u) << "threadgroup " << tg;
  EXPECT_EQ(s.tag[5 * 64 + 9], 5u);
}

void launch_count(const ThreadContext& tc, void* user) {
  count_threads(static_cast<uint*>(user), tc.thread_index_in_threadgroup, tc.threadgroup_position_in_grid.x);
}

// A counter that leaked from one threadgroup into the next (or another worker's) would exceed 96.
TEST(ThreadgroupVariables, AtomicVariableCountsOneThreadgroup) {
  std::vector<uint> out(8);
  DispatchOptions o = test::grid_1d(8, 96, "count_threads");
  o.workers = 2;
  o.zero_threadgroup_variables = true;
  const DispatchResult r = dispatch(o, launch_count, out.data());
  ASSERT_TRUE(r.ok()) << test::describe(r);
  for (uint tg = 0; tg < 8; ++tg) EXPECT_EQ(out[tg], 96u) << "threadgroup " << tg;
}

void launch_template(const ThreadContext& tc, void* user) {
  template_helper(static_cast<float*>(user), tc.thread_index_in_threadgroup, tc.threadgroup_position_in_grid.x);
}

TEST(ThreadgroupVariables, TemplateHelperGetsOneSitePerInstantiation) {
  std::vector<float> out(4 * 3);
  DispatchOptions o = test::grid_1d(3, 32, "template_helper");
  o.order = LaneOrder::shuffled;
  const DispatchResult r = dispatch(o, launch_template, out.data());
  ASSERT_TRUE(r.ok()) << test::describe(r);
  for (uint tg = 0; tg < 3; ++tg) {
    EXPECT_EQ(out[4 * tg + 0], 496.0f);    // 0 + 1 + ... + 31
    EXPECT_EQ(out[4 * tg + 1], 992.0f);    // twice that
    EXPECT_EQ(out[4 * tg + 2], 10416.0f);  // 0 + 1 + 4 + ... + 961
    EXPECT_EQ(out[4 * tg + 3], 1.0f);
  }
}

// ---- poison ----

template <class T>
void launch_half_written(const ThreadContext& tc, void* user) {
  half_written<T>(static_cast<float*>(user), tc.thread_index_in_threadgroup);
}

template <class T>
DispatchResult run_half_written(const char* name, std::vector<float>& out, bool zeroed) {
  DispatchOptions o = test::grid_1d(1, 64, name);
  o.zero_threadgroup_variables = zeroed;
  return dispatch(o, launch_half_written<T>, out.data());
}

TEST(ThreadgroupVariables, PoisonReachingSimdSumIsReportedPerElementType) {
  std::vector<float> out(64);
  const struct {
    const char* name;
    DispatchResult r;
    const char* bits;
  } cases[] = {{"half_written_f32", run_half_written<float>("half_written_f32", out, false), "0x7FC0DEAD"},
               {"half_written_f16", run_half_written<half>("half_written_f16", out, false), "0x7EAD"},
               {"half_written_bf16", run_half_written<bfloat>("half_written_bf16", out, false), "0x7FED"}};
  for (const auto& c : cases) {
    EXPECT_TRUE(c.r.ok()) << c.name << ": " << test::describe(c.r);
    ASSERT_EQ(c.r.poison_flows.size(), 1u) << c.name;
    const SimIssue& i = c.r.poison_flows[0];
    EXPECT_EQ(i.kind, Kind::poison_in_collective) << c.name;
    EXPECT_EQ(i.line, mark("half_written_sum")) << c.name;
    EXPECT_EQ(i.thread_index % 2, 1u) << c.name;  // an odd thread's slot was never written
    EXPECT_TRUE(contains(i.message, c.bits)) << i.message;
  }
  std::printf("example report: %s\n", cases[0].r.poison_flows[0].message.c_str());
}

TEST(ThreadgroupVariables, ZeroedVariablesAreNotPoison) {
  std::vector<float> out(64);
  const DispatchResult r = run_half_written<float>("half_written_f32", out, true);
  ASSERT_TRUE(r.ok()) << test::describe(r);
  EXPECT_EQ(out[0], 240.0f);   // 0 + 2 + ... + 30
  EXPECT_EQ(out[40], 752.0f);  // 32 + 34 + ... + 62
}

void launch_struct(const ThreadContext& tc, void* user) {
  struct_variable(static_cast<uint*>(user), tc.thread_index_in_threadgroup);
}

TEST(ThreadgroupVariables, StructVariableGetsTheF32PoisonAndIsShared) {
  std::vector<uint> out(1 + 32);
  const DispatchResult r = dispatch(test::grid_1d(1, 32, "struct_variable"), launch_struct, out.data());
  ASSERT_TRUE(r.ok()) << test::describe(r);
  EXPECT_EQ(out[0], poison_bits_f32());
  for (uint i = 0; i < 32; ++i) EXPECT_EQ(out[1 + i], 7u) << "thread " << i;
}

// ---- Metal's 32 KiB ----

struct BigArgs {
  float* out;
  uint mode;
};

void launch_big(const ThreadContext& tc, void* user) {
  auto& a = *static_cast<BigArgs*>(user);
  big_tile(a.out, a.mode, tc.thread_index_in_threadgroup);
}

DispatchResult run_big(uint mode, size_t array_bytes, std::vector<float>& out) {
  BigArgs args{out.data(), mode};
  DispatchOptions o = test::grid_1d(3, 64, "big_tile");
  if (array_bytes) o.threadgroup_arrays = {{array_bytes, {}}};
  o.workers = 2;
  return dispatch(o, launch_big, &args);
}

TEST(ThreadgroupVariables, ExactlyThirtyTwoKiBFits) {
  std::vector<float> out(64);
  const DispatchResult r = run_big(0, 0, out);
  ASSERT_TRUE(r.ok()) << test::describe(r);
  EXPECT_EQ(out[63], 63.0f);
}

TEST(ThreadgroupVariables, VariablesPastThirtyTwoKiBAreReported) {
  std::vector<float> out(64);
  const DispatchResult r = run_big(1, 0, out);
  EXPECT_EQ(r.issues_total, 3u) << test::describe(r);  // every threadgroup, none crashed
  EXPECT_EQ(r.threadgroups_run, 3u);
  ASSERT_FALSE(r.issues.empty());
  const SimIssue& i = r.issues[0];
  EXPECT_EQ(i.kind, Kind::threadgroup_memory_limit);
  EXPECT_EQ(i.line, mark("extra"));
  EXPECT_TRUE(contains(i.message, "kernel 'big_tile'")) << i.message;
  EXPECT_TRUE(contains(i.message, "threadgroup variable `extra`")) << i.message;
  EXPECT_TRUE(contains(i.message, "to 32784 bytes")) << i.message;  // 32768 + 16
  std::printf("example report: %s\n", i.message.c_str());
}

TEST(ThreadgroupVariables, ArraysCountTowardsTheLimit) {
  std::vector<float> out(64);
  const DispatchResult r = run_big(0, 16, out);
  ASSERT_EQ(r.issues_total, 3u) << test::describe(r);
  EXPECT_TRUE(contains(r.issues[0].message, "threadgroup variable `big`")) << r.issues[0].message;
  EXPECT_TRUE(contains(r.issues[0].message, "to 32784 bytes (16 in [[threadgroup(n)]] arrays")) << r.issues[0].message;
}

}  // namespace tg_variables_test
