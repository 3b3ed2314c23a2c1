// Semantics of each simd-group function, with all and with partially active simdgroups.
#include <cmath>
#include <limits>

#include "sim_test_util.h"
// clang-format off
#include <kernels/simd_ops.metal>  // the simulator copy (see mtlsim_prepare_msl)
// clang-format on

namespace {

using namespace mtlsim;

template <class T>
struct SimdArgs {
  const T* x;
  T* out;
  uint active;
};

void launch_float_ops(const ThreadContext& tc, void* user) {
  auto& a = *static_cast<SimdArgs<float>*>(user);
  simd_float_ops(a.x, a.out, a.active, tc.thread_position_in_grid.x, tc.thread_index_in_simdgroup);
}
void launch_int_ops(const ThreadContext& tc, void* user) {
  auto& a = *static_cast<SimdArgs<int>*>(user);
  simd_int_ops(a.x, a.out, a.active, tc.thread_position_in_grid.x,
               as_builtin<ushort>(tc.thread_index_in_simdgroup));
}

// Serial model of one simdgroup: lanes [0, active) participate.
struct Group {
  const float* x;
  uint active;
  float at(int l) const { return x[l]; }
  float src(int l, int s) const { return s >= 0 && s < int(active) ? x[s] : x[l]; }
};

class SimdFloatTest : public ::testing::TestWithParam<std::tuple<uint, LaneOrder>> {};

TEST_P(SimdFloatTest, MatchesSerialModel) {
  const auto [active, order] = GetParam();
  const uint groups = 3, n = groups * 32;
  std::vector<float> x = test::random_floats(n, 5, 0.5f, 1.5f);
  std::vector<float> out(n * kFloatCols, -7.0f);
  SimdArgs<float> args{x.data(), out.data(), active};
  DispatchOptions o = test::grid_1d(1, n, "simd_float_ops");
  o.order = order;
  const DispatchResult r = dispatch(o, launch_float_ops, &args);
  ASSERT_TRUE(r.ok()) << test::describe(r);
  for (uint s = 0; s < groups; ++s) {
    const Group g{x.data() + s * 32, active};
    float sum = 0, prod = 1, mn = INFINITY, mx = -INFINITY;
    for (uint l = 0; l < active; ++l) sum += g.at(l), prod *= g.at(l), mn = std::fmin(mn, g.at(l)), mx = std::fmax(mx, g.at(l));
    float prefix = 0;
    for (uint l = 0; l < active; ++l) {
      const float* row = &out[(s * 32 + l) * kFloatCols];
      EXPECT_FLOAT_EQ(row[0], sum) << "lane " << l;
      EXPECT_FLOAT_EQ(row[1], prod);
      EXPECT_EQ(row[2], mn);
      EXPECT_EQ(row[3], mx);
      EXPECT_EQ(row[4], g.src(l, (l + 5) % 32)) << "shuffle lane " << l;
      EXPECT_EQ(row[5], g.src(l, l + 3)) << "shuffle_down lane " << l;
      EXPECT_EQ(row[6], g.src(l, int(l) - 3)) << "shuffle_up lane " << l;
      EXPECT_EQ(row[7], g.src(l, l ^ 5)) << "shuffle_xor lane " << l;
      EXPECT_EQ(row[8], g.src(l, 7));
      EXPECT_EQ(row[9], g.at(0));
      EXPECT_FLOAT_EQ(row[11], prefix) << "exclusive lane " << l;
      prefix += g.at(l);
      EXPECT_FLOAT_EQ(row[10], prefix) << "inclusive lane " << l;
      EXPECT_EQ(row[12], g.src(l, (l + 2) % 32));
      EXPECT_EQ(row[13], g.src(l, (l + 30) % 32));
    }
    for (uint l = active; l < 32; ++l) EXPECT_EQ(out[(s * 32 + l) * kFloatCols], -7.0f) << "returned lane wrote";
  }
}

INSTANTIATE_TEST_SUITE_P(ActiveLanes, SimdFloatTest,
                         ::testing::Combine(::testing::Values(32u, 20u, 1u), ::testing::ValuesIn(test::kAllOrders)));

// The order a float simd_sum rounds in: a full simdgroup as a shuffle-down tree (lane l + 16, then
// + 8, ...: bit for bit the CUDA shim's butterfly), a partial one in lane order. 1e8 + 1 rounds
// back to 1e8 in float, so the order shows: the tree pairs lane 0's 1e8 with lane 16's -1e8 first
// and keeps every 1; lane order loses the 1s that come before lane 16.
TEST(SimdSum, FullSimdgroupReducesAsATreePartialInLaneOrder) {
  for (const uint active : {32u, 20u}) {
    std::vector<float> x(32, 1.0f);
    x[0] = 1e8f;
    x[16] = -1e8f;
    std::vector<float> out(32 * kFloatCols, -7.0f);
    SimdArgs<float> args{x.data(), out.data(), active};
    const DispatchResult r = dispatch(test::grid_1d(1, 32, "simd_float_ops"), launch_float_ops, &args);
    ASSERT_TRUE(r.ok()) << test::describe(r);
    const float expected = active == 32 ? 30.0f : 3.0f;  // lane order: 1e8, 1s lost, -1e8, then lanes 17-19
    for (uint l = 0; l < active; ++l) EXPECT_EQ(out[l * kFloatCols], expected) << active << " active, lane " << l;
  }
}

TEST(Simd, IntegerReductionsVotesAndPrefix) {
  const uint n = 64, active = 24;
  std::vector<int> x(n);
  for (uint i = 0; i < n; ++i) x[i] = int(i % 7) * 13 - 20 + (i == 40 ? 200 : 0);
  std::vector<int> out(n * kIntCols, -1);
  SimdArgs<int> args{x.data(), out.data(), active};
  const DispatchResult r = dispatch(test::grid_1d(1, n, "simd_int_ops"), launch_int_ops, &args);
  ASSERT_TRUE(r.ok()) << test::describe(r);
  for (uint s = 0; s < 2; ++s) {
    const int* g = &x[s * 32];
    int sum = 0, mn = INT32_MAX, mx = INT32_MIN, a = -1, o = 0, xr = 0, any = 0, all = 1;
    uint32_t ballot = 0;
    for (uint l = 0; l < active; ++l) {
      sum += g[l], mn = std::min(mn, g[l]), mx = std::max(mx, g[l]), a &= g[l], o |= g[l], xr ^= g[l];
      any |= g[l] > 90, all &= g[l] > -100;
      if (g[l] > 0) ballot |= 1u << l;
    }
    int prefix = 0;
    for (uint l = 0; l < active; ++l) {
      const int* row = &out[(s * 32 + l) * kIntCols];
      EXPECT_EQ(row[0], sum);
      EXPECT_EQ(row[1], mn);
      EXPECT_EQ(row[2], mx);
      EXPECT_EQ(row[3], a);
      EXPECT_EQ(row[4], o);
      EXPECT_EQ(row[5], xr);
      EXPECT_EQ(row[6], any) << "simdgroup " << s;
      EXPECT_EQ(row[7], all);
      EXPECT_EQ(uint32_t(row[8]), ballot);
      EXPECT_EQ(row[9], l == 0 ? 1 : 0);
      EXPECT_EQ(row[10], prefix);
      prefix += g[l];
      EXPECT_EQ(uint32_t(row[11]), (1u << active) - 1);
    }
  }
}

TEST(Simd, MaxAndMinIgnoreNaNUnlessAllNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x(64, nan);
  for (uint l = 0; l < 32; l += 3) x[l] = float(l);  // simdgroup 0: some NaN; simdgroup 1: all NaN
  std::vector<float> out(64 * kFloatCols);
  SimdArgs<float> args{x.data(), out.data(), 32};
  ASSERT_TRUE(dispatch(test::grid_1d(1, 64, "simd_float_ops"), launch_float_ops, &args).ok());
  EXPECT_EQ(out[3], 30.0f);
  EXPECT_EQ(out[2], 0.0f);
  EXPECT_TRUE(std::isnan(out[0]));  // simd_sum does propagate NaN
  EXPECT_TRUE(std::isnan(out[32 * kFloatCols + 3]));
  EXPECT_TRUE(std::isnan(out[32 * kFloatCols + 2]));
}

struct VectorArgs {
  const float* x;
  float4* out4;
  half* outh;
};
void launch_vector_ops(const ThreadContext& tc, void* user) {
  auto& a = *static_cast<VectorArgs*>(user);
  simd_vector_ops(a.x, a.out4, a.outh, tc.thread_position_in_grid.x, tc.thread_index_in_simdgroup);
}

TEST(Simd, VectorAndHalfPayloads) {
  std::vector<float> x(32);
  for (uint i = 0; i < 32; ++i) x[i] = float(i) * 0.5f;
  std::vector<float4> out4(64);
  std::vector<half> outh(32);
  VectorArgs args{x.data(), out4.data(), outh.data()};
  ASSERT_TRUE(dispatch(test::grid_1d(1, 32, "simd_vector_ops"), launch_vector_ops, &args).ok());
  const float sum = 0.5f * 31 * 32 / 2;
  for (uint l = 0; l < 32; ++l) {
    const float4 s = out4[l * 2], sh = out4[l * 2 + 1];
    EXPECT_EQ(s.x, sum);
    EXPECT_EQ(s.y, 2 * sum);
    EXPECT_EQ(s.z, -sum);
    EXPECT_EQ(s.w, 32.0f);
    EXPECT_EQ(sh.x, x[l ^ 1u]);
    EXPECT_EQ(sh.y, float(l ^ 1u));
    EXPECT_EQ(sh.z, 0.5f);
    EXPECT_EQ(sh.w, -1.0f);
    EXPECT_EQ(float(outh[l]), 15.5f);
  }
}

}  // namespace
