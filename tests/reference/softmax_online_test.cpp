// The references of softmax_online and softmax_single_row against the declared semantics, which
// they share with the three-pass softmax: -inf gives exactly 0, a row without a finite element
// or with a NaN or +inf is NaN; and softmax_single_row's precondition wording.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "softmax_online/softmax_online_reference.h"
#include "softmax_single_row/softmax_single_row_reference.h"

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> online(std::vector<float> x) {
  namespace k = mtlgen::kernels::softmax_online;
  std::vector<float> out(x.size(), -1.0f);
  k::reference<float>(k::Dims{1, static_cast<uint32_t>(x.size())}, std::span<const float>(x), std::span<float>(out));
  return out;
}

std::vector<float> single_row(std::vector<float> x) {
  namespace k = mtlgen::kernels::softmax_single_row;
  std::vector<float> out(x.size(), -1.0f);
  k::reference<float>(k::Dims{1, static_cast<uint32_t>(x.size())}, std::span<const float>(x), std::span<float>(out));
  return out;
}

bool all_nan(const std::vector<float>& v) {
  for (float f : v) {
    if (!std::isnan(f)) return false;
  }
  return true;
}

TEST(SoftmaxOnlineReference, MatchesHandComputedValues) {
  for (auto softmax : {online, single_row}) {
    auto out = softmax({0, std::log(3.0f)});
    EXPECT_NEAR(out[0], 0.25f, 1e-7);
    EXPECT_NEAR(out[1], 0.75f, 1e-7);
  }
}

TEST(SoftmaxOnlineReference, OneFiniteAmongNegativeInfinitiesGetsExactlyOne) {
  for (auto softmax : {online, single_row}) {
    EXPECT_EQ(softmax({-kInf, -kInf, 2.5f, -kInf}), (std::vector<float>{0, 0, 1, 0}));
  }
}

TEST(SoftmaxOnlineReference, RowsWithoutAFiniteMaximumAreNaN) {
  for (auto softmax : {online, single_row}) {
    EXPECT_TRUE(all_nan(softmax({-kInf, -kInf, -kInf})));
    EXPECT_TRUE(all_nan(softmax({1, kNaN, 2})));
    EXPECT_TRUE(all_nan(softmax({1, kInf, 2})));
  }
}

TEST(SoftmaxSingleRowReference, PreconditionUsesTheSpecsWording) {
  namespace k = mtlgen::kernels::softmax_single_row;
  std::vector<float> x(8193), out(8193);
  try {
    k::reference<float>(k::Dims{1, 8193}, std::span<const float>(x), std::span<float>(out));
    FAIL() << "n = 8193 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "softmax_single_row: softmax_single_row holds the row in registers (TG * N_READS = 8192 elements); "
                 "use softmax_online for rows longer than 8192 (rows = 1, n = 8193)");
  }
}

}  // namespace
