// The comparison of simulated outputs with the reference: what a mismatch report says.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "verify/compare.h"
#include "verify/run_checks.h"

namespace mtlgen::verify {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

OutputStats compare(const std::vector<float>& got, const std::vector<float>& want, double max_abs = 1e-6) {
  ir::Tolerance tol;
  tol.max_abs = max_abs;
  return compare_output("out", ir::ScalarType::f32, {static_cast<int64_t>(got.size())}, got.data(), want.data(),
                        got.size(), tol);
}

TEST(CompareOutput, WithinToleranceIsNoMismatch) {
  OutputStats s = compare({1.0f, 2.0f}, {1.0f, 2.0000005f});
  EXPECT_EQ(s.mismatches, 0u);
  EXPECT_GT(s.max_abs, 0.0);
  EXPECT_LT(s.max_abs, 1e-6);
}

TEST(CompareOutput, PeakRelIsRelativeToTheOutputsLargestValue) {
  ir::Tolerance tol;
  tol.peak_rel = 1e-3;
  const std::vector<float> want = {200.0f, 0.0f, -3.0f};
  const std::vector<float> near = {200.1f, 0.15f, -3.1f};  // each within 1e-3 * 200
  EXPECT_EQ(compare_output("dA", ir::ScalarType::f32, {3}, near.data(), want.data(), 3, tol).mismatches, 0u);
  const std::vector<float> far = {200.0f, 0.25f, -3.0f};
  OutputStats s = compare_output("dA", ir::ScalarType::f32, {3}, far.data(), want.data(), 3, tol);
  EXPECT_EQ(s.mismatches, 1u);
  ASSERT_EQ(s.examples.size(), 1u);
  EXPECT_EQ(s.examples[0], "dA[1] = 0.25, expected 0");
}

TEST(CompareOutput, NaNWhereTheReferenceHasANumberIsAnUnboundedError) {
  OutputStats s = compare({kNaN, 2.0f}, {1.0f, 2.0f});
  EXPECT_EQ(s.mismatches, 1u);
  EXPECT_EQ(s.nonfinite_mismatches, 1u);  // counted apart from the finite elements' max abs of 0
  EXPECT_EQ(s.max_abs, 0.0);
  ASSERT_EQ(s.examples.size(), 1u);
  EXPECT_EQ(s.examples[0], "out[0] = nan, expected 1");
}

TEST(CompareOutput, NaNWhereTheReferenceHasNaNMatches) {
  OutputStats s = compare({kNaN, 2.0f}, {kNaN, 2.0f});
  EXPECT_EQ(s.mismatches, 0u);
  EXPECT_EQ(s.nonfinite_mismatches, 0u);
  EXPECT_EQ(s.max_abs, 0.0);
}

TEST(CompareOutput, InfinityMustMatchExactly) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(compare({inf}, {inf}).mismatches, 0u);
  OutputStats s = compare({inf}, {-inf});
  EXPECT_EQ(s.mismatches, 1u);
  EXPECT_EQ(s.nonfinite_mismatches, 1u);
}

// Two builds of a kernel (race-instrumented and plain, pattern- and zero-filled) may give a NaN
// either sign: the lane-order comparison takes any two NaNs as one outcome, and nothing else.
TEST(RunDifference, NaNsOfEitherSignAreOneOutcome) {
  const std::vector<float> baseline = {kNaN, 1.0f, 2.0f}, other = {-kNaN, 1.0f, -2.0f};
  auto bytes = [](const std::vector<float>& v) {
    const auto* p = reinterpret_cast<const uint8_t*>(v.data());
    return std::vector<uint8_t>(p, p + v.size() * sizeof(float));
  };
  const std::vector<std::vector<uint8_t>> runs = {bytes(baseline), bytes(other)};
  const OutputRuns o{"y", ir::ScalarType::f32, {3}, 3, false, &runs};
  const ElementFinding f = run_difference(o, 1);
  EXPECT_EQ(f.count, 1u);
  ASSERT_EQ(f.examples.size(), 1u);
  EXPECT_EQ(f.examples[0].rfind("y[2] = 2", 0), 0u) << f.examples[0];
  EXPECT_FALSE(same_outcome(ir::ScalarType::i32, runs[0].data(), runs[1].data(), 0));  // bits of an int
}

}  // namespace
}  // namespace mtlgen::verify
