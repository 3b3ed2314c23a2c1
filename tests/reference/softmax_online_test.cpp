// The references of softmax_online and softmax_single_row against the declared semantics, which
// they share with the three-pass softmax: -inf gives exactly 0, a row without a finite element
// or with a NaN or +inf is NaN; and softmax_single_row's precondition wording.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "softmax_online/softmax_online_reference.h"
#include "softmax_single_row/softmax_single_row_reference.h"

namespace softmax_online_test {  // named: unity builds (tests/CMakeLists.txt)

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

// The reference has no tuning: it checks the dims' own bounds; the capacity of a variant is checked
// by check_dims(dims, tuning), as the glue calls it, in the spec's wording with the tuning named.
TEST(SoftmaxSingleRowReference, PreconditionUsesTheSpecsWording) {
  namespace k = mtlgen::kernels::softmax_single_row;
  std::vector<float> x(16385), out(16385);
  try {
    k::reference<float>(k::Dims{1, 16385}, std::span<const float>(x), std::span<float>(out));
    FAIL() << "n = 16385 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "softmax_single_row: n must be at most 16384 (rows = 1, n = 16385)");
  }
  EXPECT_NO_THROW(k::check_dims(k::Dims{1, 1025}));
  EXPECT_NO_THROW(k::check_dims(k::Dims{1, 1024}, k::Tuning{256, 4}));
  try {
    k::check_dims(k::Dims{1, 1025}, k::Tuning{256, 4});
    FAIL() << "n = 1025 was accepted at TG=256, N_READS=4";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "softmax_single_row: softmax_single_row holds the row in registers (TG * N_READS elements); pick a "
                 "tuning with more capacity, or softmax_online for longer rows (rows = 1, n = 1025 at TG=256, "
                 "N_READS=4)");
  }
}

}  // namespace softmax_online_test
