// The C++ references of the shipped kernels against values worked out by hand, including the
// declared semantics for ties, NaN and infinities, and the preconditions' wording.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "argmax/argmax_reference.h"
#include "rms_norm/rms_norm_reference.h"
#include "softmax/softmax_reference.h"

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

uint32_t argmax_of(std::vector<float> x) {
  namespace k = mtlgen::kernels::argmax;
  std::vector<uint32_t> out(1, 12345);
  k::reference<float>(k::Dims{1, static_cast<uint32_t>(x.size())}, std::span<const float>(x), std::span<uint32_t>(out));
  return out[0];
}

TEST(ArgmaxReference, TiesGoToTheLowestIndex) {
  EXPECT_EQ(argmax_of({1, 3, 3, 2}), 1u);
  EXPECT_EQ(argmax_of({5, 5, 5}), 0u);
}

TEST(ArgmaxReference, NaNIsNeverChosen) {
  EXPECT_EQ(argmax_of({kNaN, 2, kNaN, 2}), 1u);
  EXPECT_EQ(argmax_of({kNaN, -kInf, kNaN}), 1u);
  EXPECT_EQ(argmax_of({1, kNaN, kInf}), 2u);
}

TEST(ArgmaxReference, AllNaNGivesZero) { EXPECT_EQ(argmax_of({kNaN, kNaN, kNaN}), 0u); }

TEST(ArgmaxReference, HalfInputsRoundBeforeComparing) {
  namespace k = mtlgen::kernels::argmax;
  // 1.0001 and 1.0002 both round to 1.0 in half: a tie, so the lower index wins.
  std::vector<mtlgen::half> x = {mtlgen::half(0.5f), mtlgen::half(1.0001f), mtlgen::half(1.0002f)};
  std::vector<uint32_t> out(1);
  k::reference<mtlgen::half>(k::Dims{1, 3}, std::span<const mtlgen::half>(x), std::span<uint32_t>(out));
  EXPECT_EQ(out[0], 1u);
}

TEST(RmsNormReference, MatchesHandComputedValues) {
  namespace k = mtlgen::kernels::rms_norm;
  std::vector<float> x = {3, 4}, w = {1, 2}, out(2);
  k::reference<float>(k::Dims{1, 2}, std::span<const float>(x), std::span<const float>(w), std::span<float>(out),
                      k::Scalars{0.0f});
  float rms = std::sqrt(12.5f);  // mean of 9 and 16
  EXPECT_NEAR(out[0], 3 / rms, 1e-6);
  EXPECT_NEAR(out[1], 4 / rms * 2, 1e-6);
}

TEST(RmsNormReference, PreconditionsUseTheSpecsWording) {
  namespace k = mtlgen::kernels::rms_norm;
  std::vector<float> none;
  try {
    k::reference<float>(k::Dims{1, 0}, std::span<const float>(none), std::span<const float>(none), std::span<float>(none));
    FAIL() << "n = 0 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "rms_norm: n must be at least 1 (rows = 1, n = 0)");
  }
}

TEST(RmsNormReference, RejectsBuffersSmallerThanTheirShape) {
  namespace k = mtlgen::kernels::rms_norm;
  std::vector<float> x(3), w(2), out(4);
  EXPECT_THROW(k::reference<float>(k::Dims{2, 2}, std::span<const float>(x), std::span<const float>(w), std::span<float>(out)),
               std::invalid_argument);
}

TEST(SoftmaxReference, MatchesHandComputedValues) {
  namespace k = mtlgen::kernels::softmax;
  std::vector<float> x = {0, std::log(3.0f)}, out(2);
  k::reference<float>(k::Dims{1, 2}, std::span<const float>(x), std::span<float>(out));
  EXPECT_NEAR(out[0], 0.25f, 1e-7);
  EXPECT_NEAR(out[1], 0.75f, 1e-7);
}

TEST(SoftmaxReference, OneFiniteAmongNegativeInfinitiesGetsEverything) {
  namespace k = mtlgen::kernels::softmax;
  std::vector<float> x = {-kInf, 2.5f, -kInf}, out(3);
  k::reference<float>(k::Dims{1, 3}, std::span<const float>(x), std::span<float>(out));
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[1], 1.0f);
  EXPECT_EQ(out[2], 0.0f);
}

}  // namespace
