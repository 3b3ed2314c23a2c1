// The rope reference against hand-computed rotations: both pairings, position scaling, and the
// identity at position 0. head_dim 4 with base 100 gives frequencies 1 and 0.1.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "rope/rope_reference.h"

namespace rope_test {  // named: unity builds (tests/CMakeLists.txt)

namespace k = mtlgen::kernels::rope;

std::vector<float> rope_of(std::vector<float> x, uint32_t position, k::Scalars scalars) {
  std::vector<uint32_t> positions = {position};
  std::vector<float> out(x.size(), -1.0f);
  k::reference<float>(k::Dims{1, 1, static_cast<uint32_t>(x.size())}, std::span<const float>(x),
                      std::span<const uint32_t>(positions), std::span<float>(out), scalars);
  return out;
}

// Split-half pairs (0, 2) and (1, 3), rotated by 1 and 0.1 rad.
TEST(RopeReference, SplitHalfRotatesElementIWithElementIPlusHalf) {
  auto out = rope_of({1, 2, 3, 4}, 1, k::Scalars{100.0f, 1.0f, 0});
  EXPECT_NEAR(out[0], -1.98411065f, 1e-6);  // 1 cos 1 - 3 sin 1
  EXPECT_NEAR(out[1], 1.59067466f, 1e-6);   // 2 cos 0.1 - 4 sin 0.1
  EXPECT_NEAR(out[2], 2.46237790f, 1e-6);   // 1 sin 1 + 3 cos 1
  EXPECT_NEAR(out[3], 4.17968349f, 1e-6);   // 2 sin 0.1 + 4 cos 0.1
}

// Traditional pairs (0, 1) and (2, 3), rotated by 1 and 0.1 rad.
TEST(RopeReference, TraditionalRotatesAdjacentElements) {
  auto out = rope_of({1, 2, 3, 4}, 1, k::Scalars{100.0f, 1.0f, 1});
  EXPECT_NEAR(out[0], -1.14263966f, 1e-6);  // 1 cos 1 - 2 sin 1
  EXPECT_NEAR(out[1], 1.92207560f, 1e-6);   // 1 sin 1 + 2 cos 1
  EXPECT_NEAR(out[2], 2.58567883f, 1e-6);   // 3 cos 0.1 - 4 sin 0.1
  EXPECT_NEAR(out[3], 4.27951691f, 1e-6);   // 3 sin 0.1 + 4 cos 0.1
}

// scale 0.5 at position 3: angles 1.5 and 0.15.
TEST(RopeReference, ScaleMultipliesThePosition) {
  auto out = rope_of({1, 2, 3, 4}, 3, k::Scalars{100.0f, 0.5f, 0});
  EXPECT_NEAR(out[0], -2.92174776f, 1e-6);
  EXPECT_NEAR(out[1], 1.37978963f, 1e-6);
  EXPECT_NEAR(out[2], 1.20970659f, 1e-6);
  EXPECT_NEAR(out[3], 4.25396058f, 1e-6);
}

TEST(RopeReference, PositionZeroIsTheIdentity) {
  std::vector<float> x = {0.5f, -1.25f, 3.0f, 7.5f, -2.0f, 0.125f};
  EXPECT_EQ(rope_of(x, 0, k::Scalars{10000.0f, 1.0f, 0}), x);
  EXPECT_EQ(rope_of(x, 0, k::Scalars{10000.0f, 1.0f, 1}), x);
}

TEST(RopeReference, OddHeadDimIsRejected) {
  std::vector<float> x(3), out(3);
  std::vector<uint32_t> positions = {0};
  EXPECT_THROW(k::reference<float>(k::Dims{1, 1, 3}, std::span<const float>(x), std::span<const uint32_t>(positions),
                                   std::span<float>(out)),
               std::invalid_argument);
}

}  // namespace rope_test
