// Apple's standard-library surface (kernels/stdlib_surface.metal): limits, matrices, simdgroup
// matrices with simdgroup semantics, mixed-operand and integer overloads, __metal_* builtins.
#include <cmath>

#include "sim_test_util.h"
// clang-format off
#include <kernels/stdlib_surface.metal>  // the simulator copy (see mtlsim_prepare_msl)
// clang-format on

namespace {

using namespace mtlsim;

void launch_limits(const ThreadContext& tc, void* user) { limits(static_cast<float*>(user), tc.thread_position_in_grid.x); }

TEST(StdlibSurface, LimitsHaveMetalValues) {
  std::vector<float> out(16, -1.0f);
  ASSERT_TRUE(dispatch(test::grid_1d(1, 1, "limits"), launch_limits, out.data()).ok());
  const float expected[16] = {65504.0f, 6.103515625e-05f, 0.0009765625f, 65504.0f, -65504.0f, 0x1p-24f,
                              0x1.fep127f, 0x1p-7f, 1, 1, FLT_EPSILON, 3.140625f, 0.70710678f, 27, 22, 310};
  for (int i = 0; i < 16; ++i) EXPECT_EQ(out[i], expected[i]) << i;
}

void launch_matrices(const ThreadContext& tc, void* user) { matrices(static_cast<float*>(user), tc.thread_position_in_grid.x); }

TEST(StdlibSurface, MatricesAreColumnMajor) {
  std::vector<float> out(16, -7.0f);
  ASSERT_TRUE(dispatch(test::grid_1d(1, 1, "matrices"), launch_matrices, out.data()).ok());
  EXPECT_EQ(out, (std::vector<float>{41, 52, 63, 6, 15, 1, 2, 3, 6, -2, 8, 2, 6, 8, -1, 4}));
}

// Apple's lane layout, as the spec's figure and MLX's fragment code give it, written out longhand:
// lanes 0-7 cover the top-left 4x4 block, 8-15 the top-right, 16-23 bottom-left, 24-31 bottom-right;
// within a block, lane pairs walk rows and each lane holds two adjacent columns.
int layout_row(int l) { return (l / 16) * 4 + (l % 8) / 2; }
int layout_col(int l) { return ((l / 8) % 2) * 4 + (l % 2) * 2; }

struct MmaArgs {
  const float *a, *bt;
  const half* c;
  float *d, *owned;
};

void launch_mma(const ThreadContext& tc, void* user) {
  auto& m = *static_cast<MmaArgs*>(user);
  simdgroup_mma(m.a, m.bt, m.c, m.d, m.owned, as_builtin<ushort>(tc.thread_index_in_simdgroup));
}

TEST(StdlibSurface, SimdgroupMultiplyAccumulateMatchesSerialProduct) {
  const std::vector<float> a = test::random_floats(64, 1), bt = test::random_floats(64, 2);
  const std::vector<float> cf = test::random_floats(128, 3);
  std::vector<half> c(cf.begin(), cf.end());
  std::vector<float> d(64, -7.0f), owned(64, -7.0f);
  MmaArgs args{a.data(), bt.data(), c.data(), d.data(), owned.data()};
  for (LaneOrder order : test::kAllOrders) {
    DispatchOptions o = test::grid_1d(1, 32, "simdgroup_mma");
    o.order = order;
    const DispatchResult r = dispatch(o, launch_mma, &args);
    ASSERT_TRUE(r.ok()) << test::describe(r);
    for (int row = 0; row < 8; ++row)
      for (int col = 0; col < 8; ++col) {
        float s = 0.0f;
        for (int j = 0; j < 8; ++j) s += a[row * 8 + j] * bt[col * 8 + j];
        s += float(c[row * 16 + 8 + col]);
        EXPECT_NEAR(d[row * 8 + col], s, 1e-5f) << row << "," << col;
      }
  }
}

TEST(StdlibSurface, ThreadElementsFollowApplesLayout) {
  const std::vector<float> a(64, 1.0f), bt(64, 1.0f);
  std::vector<half> c(128, half(0.0f));
  std::vector<float> d(64), owned(64, -1.0f);
  MmaArgs args{a.data(), bt.data(), c.data(), d.data(), owned.data()};
  ASSERT_TRUE(dispatch(test::grid_1d(1, 32, "simdgroup_mma"), launch_mma, &args).ok());
  for (int l = 0; l < 32; ++l) {
    EXPECT_EQ(owned[layout_row(l) * 8 + layout_col(l)], float(l)) << "lane " << l;
    EXPECT_EQ(owned[layout_row(l) * 8 + layout_col(l) + 1], l + 0.5f) << "lane " << l;
  }
}

TEST(StdlibSurface, MissingLanesMakeTheProductNaN) {
  const std::vector<float> a(64, 1.0f), bt(64, 1.0f);
  std::vector<half> c(128, half(0.0f));
  std::vector<float> d(64, -7.0f), owned(64, -7.0f);
  MmaArgs args{a.data(), bt.data(), c.data(), d.data(), owned.data()};
  ASSERT_TRUE(dispatch(test::grid_1d(1, 16, "simdgroup_mma"), launch_mma, &args).ok());
  for (int i = 0; i < 64; ++i) {
    if (i < 32) EXPECT_TRUE(std::isnan(d[i])) << i;  // rows 0-3 held by lanes 0-15
    else EXPECT_EQ(d[i], -7.0f) << i;
  }
}

struct IdentityArgs {
  const float* a;
  float* d;
};
void launch_identity(const ThreadContext&, void* user) {
  auto& m = *static_cast<IdentityArgs*>(user);
  simdgroup_identity(m.a, m.d);
}

TEST(StdlibSurface, SimdgroupMultiplyAndTransposedStoreAtOrigin) {
  const std::vector<float> a = test::random_floats(64, 4);
  std::vector<float> d(90, -7.0f);
  IdentityArgs args{a.data(), d.data()};
  ASSERT_TRUE(dispatch(test::grid_1d(1, 32, "simdgroup_identity"), launch_identity, &args).ok());
  std::vector<float> expected(90, -7.0f);
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 8; ++c) expected[(1 + c) * 10 + 2 + r] = a[r * 8 + c];
  EXPECT_EQ(d, expected);
}

struct OverloadArgs {
  float* out;
  int* iout;
};
void launch_overloads(const ThreadContext& tc, void* user) {
  auto& o = *static_cast<OverloadArgs*>(user);
  overloads(o.out, o.iout, tc.thread_position_in_grid.x);
}

TEST(StdlibSurface, OverloadsRealKernelsCall) {
  std::vector<float> out(16, -7.0f);
  std::vector<int> iout(13, -7);
  OverloadArgs args{out.data(), iout.data()};
  ASSERT_TRUE(dispatch(test::grid_1d(1, 1, "overloads"), launch_overloads, &args).ok());
  EXPECT_EQ(out, (std::vector<float>{6, -2, 5, 3, -1, 0.75f, 4, 12, 1, 0x1p-10f, 7, 7, 32, 2.5f, -2, 28}));
  EXPECT_EQ(iout, (std::vector<int>{7, 1, 0, 7, 8, 2, 3, 128, -1, 15, 0x500, int(0xff80ff00u), 3}));
}

}  // namespace

namespace {

void launch_doubles(const mtlsim::ThreadContext& tc, void* user) {
  doubles(static_cast<float*>(user), tc.thread_position_in_grid.x);
}

TEST(StdlibSurface, DoubleArgumentsComputeInFloat) {
  std::vector<float> out(3, -7.0f);
  ASSERT_TRUE(mtlsim::dispatch(mtlsim::test::grid_1d(1, 1, "doubles"), launch_doubles, out.data()).ok());
  EXPECT_EQ(out, (std::vector<float>{6, 1.5f, 1}));
}

}  // namespace

namespace {

void launch_divergent_store(const mtlsim::ThreadContext& tc, void* user) {
  divergent_matrix_store(static_cast<float*>(user), mtlsim::as_builtin<ushort>(tc.thread_index_in_simdgroup));
}

TEST(StdlibSurface, SimdgroupMatrixFunctionsAreCollectives) {
  std::vector<float> out(128);
  const mtlsim::DispatchResult r =
      mtlsim::dispatch(mtlsim::test::grid_1d(1, 32, "divergent_matrix_store"), launch_divergent_store, out.data());
  ASSERT_GE(r.issues_total, 1u);
  const mtlsim::SimIssue& i = r.issues[0];
  EXPECT_EQ(i.kind, mtlsim::SimIssue::Kind::simd_divergence);
  const int a = mtlsim::test::line_of("stdlib_surface.metal", "MARK:store_a");
  const int b = mtlsim::test::line_of("stdlib_surface.metal", "MARK:store_b");
  EXPECT_NE(i.message.find("threads 0-15 wait at simdgroup_store (line " + std::to_string(a) + ")"), std::string::npos)
      << i.message;
  EXPECT_NE(i.message.find("threads 16-31 wait at simdgroup_store (line " + std::to_string(b) + ")"), std::string::npos)
      << i.message;
}

}  // namespace
