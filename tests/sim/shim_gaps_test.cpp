// Shim constructs seen in real kernels (kernels/shim_gaps.metal), each against hand-computed
// values.
#include "sim_test_util.h"
// clang-format off
#include <kernels/shim_gaps.metal>  // the simulator copy (see mtlsim_prepare_msl)
// clang-format on

namespace {

using namespace mtlsim;

// ---- `constant` as `const` ----

struct ScaleLaunch {
  const float* in;
  float* out;
  const ScaleArgs* args;
  const uint* offset;
};

void launch_scale(const ThreadContext& tc, void* user) {
  const auto& a = *static_cast<const ScaleLaunch*>(user);
  scale_by_table(a.in, a.out, *a.args, *a.offset, tc.thread_position_in_grid.x);
}

TEST(ShimGaps, ConstArgumentsBindToConstObjects) {
  const std::vector<float> in = {1, 2, 3, 4, 5, 6};
  std::vector<float> out(8, -1.0f);
  const ScaleArgs args{3.0f, 6};  // a const object, as a `constant ScaleArgs&` binds on the Mac
  const uint offset = 1;
  const ScaleLaunch launch{in.data(), out.data(), &args, &offset};
  const DispatchResult r = dispatch(test::grid_1d(1, 8, "scale_by_table"), launch_scale, const_cast<ScaleLaunch*>(&launch));
  ASSERT_TRUE(r.ok()) << test::describe(r);
  // lut[(i + 1) % 4] = 1, 2, 4, 0.5, 1, 2
  const float expected[] = {3, 12, 36, 6, 15, 36, -1, -1};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(out[i], expected[i]) << i;
}

// ---- swizzles ----

struct SwizzleArgs {
  const float4* in;
  float4* out;
  half4* hout;
};

void launch_swizzles(const ThreadContext& tc, void* user) {
  auto& a = *static_cast<SwizzleArgs*>(user);
  swizzles(a.in, a.out, a.hout, tc.thread_position_in_grid.x);
}

TEST(ShimGaps, SwizzlesReadAndWriteTheirComponents) {
  const std::vector<float4> in = {float4(1, 2, 3, 4), float4(-5, 6, 0.5f, 8)};
  std::vector<float4> out(6);
  std::vector<half4> hout(2);
  SwizzleArgs args{in.data(), out.data(), hout.data()};
  const DispatchResult r = dispatch(test::grid_1d(1, 2, "swizzles"), launch_swizzles, &args);
  ASSERT_TRUE(r.ok()) << test::describe(r);
  const float expected[2][3][4] = {
      {{4, 6, 3, 4}, {4, 6, 8, 6}, {-1, -2, 13, 24}},
      {{-4.5f, 14, 0.5f, 8}, {12, 1, 16, 1.5f}, {5, -6, 10.5f, 28}},
  };
  for (int t = 0; t < 2; ++t)
    for (int k = 0; k < 3; ++k)
      for (int c = 0; c < 4; ++c) EXPECT_EQ(out[3 * t + k][c], expected[t][k][c]) << t << " " << k << " " << c;
  const float hexpected[2][4] = {{1, 2, 4, 3}, {-5, 6, 8, 0.5f}};
  for (int t = 0; t < 2; ++t)
    for (int c = 0; c < 4; ++c) EXPECT_EQ(float(hout[t][c]), hexpected[t][c]) << t << " " << c;
}

TEST(ShimGaps, SwizzlesKeepVectorLayout) {
  EXPECT_EQ(sizeof(float4), 16u);
  EXPECT_EQ(sizeof(float3), 16u);
  EXPECT_EQ(sizeof(half2), 4u);
  EXPECT_TRUE(std::is_trivially_copyable_v<float4>);
}

// ---- traits ----

void launch_traits(const ThreadContext& tc, void* user) {
  traits(static_cast<int*>(user), tc.thread_position_in_grid.x);
}

TEST(ShimGaps, TypeTraitsKnowHalfAndBfloat) {
  std::vector<int> out(6);
  ASSERT_TRUE(dispatch(test::grid_1d(1, 1, "traits"), launch_traits, out.data()).ok());
  EXPECT_EQ(out, (std::vector<int>{2, 2, 2, 1, 1, 4}));
}

// ---- simd_shuffle_and_fill / quads ----

void launch_fill(const ThreadContext& tc, void* user) {
  shuffle_and_fill(static_cast<float*>(user), tc.thread_index_in_simdgroup);
}

TEST(ShimGaps, ShuffleAndFill) {
  std::vector<float> out(4 * 32);
  ASSERT_TRUE(dispatch(test::grid_1d(1, 32, "shuffle_and_fill"), launch_fill, out.data()).ok());
  for (int l = 0; l < 32; ++l) {
    EXPECT_EQ(out[0 * 32 + l], l + 3 < 32 ? l + 3 : 100 + (l + 3 - 32)) << "down, lane " << l;
    EXPECT_EQ(out[1 * 32 + l], l >= 3 ? l - 3 : 100 + (l - 3 + 32)) << "up, lane " << l;
    const int base8 = l - l % 8, i8 = l % 8, base4 = l - l % 4, i4 = l % 4;
    EXPECT_EQ(out[2 * 32 + l], i8 + 3 < 8 ? l + 3 : 100 + base8 + (i8 + 3 - 8)) << "down mod 8, lane " << l;
    EXPECT_EQ(out[3 * 32 + l], i4 >= 2 ? l - 2 : 100 + base4 + (i4 - 2 + 4)) << "up mod 4, lane " << l;
  }
}

void launch_quads(const ThreadContext& tc, void* user) { quads(static_cast<float*>(user), tc.thread_index_in_simdgroup); }

TEST(ShimGaps, QuadFunctionsWorkWithinFourLanes) {
  std::vector<float> out(8 * 32);
  ASSERT_TRUE(dispatch(test::grid_1d(1, 32, "quads"), launch_quads, out.data()).ok());
  for (int l = 0; l < 32; ++l) {
    const int base = l - l % 4, i = l % 4;
    EXPECT_EQ(out[0 * 32 + l], 4 * base + 6) << "quad_sum, lane " << l;
    EXPECT_EQ(out[1 * 32 + l], base + 3) << "quad_max, lane " << l;
    EXPECT_EQ(out[2 * 32 + l], i * base + i * (i - 1) / 2) << "quad_prefix_exclusive_sum, lane " << l;
    EXPECT_EQ(out[3 * 32 + l], l ^ 1) << "quad_shuffle_xor, lane " << l;
    EXPECT_EQ(out[4 * 32 + l], base + 2) << "quad_broadcast, lane " << l;
    EXPECT_EQ(out[5 * 32 + l], i < 3 ? l + 1 : l) << "quad_shuffle_down, lane " << l;
    EXPECT_EQ(out[6 * 32 + l], base == 4 ? 1 : 0) << "quad_any, lane " << l;
    EXPECT_EQ(out[7 * 32 + l], i < 3 ? l + 1 : 100 + base) << "quad_shuffle_and_fill_down, lane " << l;
  }
}

// ---- function constants ----

void launch_bias(const ThreadContext& tc, void* user) { maybe_bias(static_cast<float*>(user), tc.thread_position_in_grid.x); }

TEST(ShimGaps, FunctionConstantIsDefinedUnlessTheLauncherSaysOtherwise) {
  bias = 0.5f;
  std::vector<float> out(4);
  ASSERT_TRUE(dispatch(test::grid_1d(1, 4, "maybe_bias"), launch_bias, out.data()).ok());
  EXPECT_EQ(out, (std::vector<float>{0.5f, 1.5f, 2.5f, 3.5f}));
  ASSERT_TRUE(set_function_constant_defined(&bias, false));
  ASSERT_TRUE(dispatch(test::grid_1d(1, 4, "maybe_bias"), launch_bias, out.data()).ok());
  EXPECT_EQ(out, (std::vector<float>{0, 1, 2, 3}));
  clear_function_constant_marks();
  EXPECT_TRUE(is_function_constant_defined(bias));
}

}  // namespace
