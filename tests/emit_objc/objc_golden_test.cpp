// Snapshots of the Objective-C++ backend: for every shipped spec and each input under
// tests/emit_objc/in, everything the "objc" emitter writes must equal tests/emit_objc/golden/<spec>/,
// and everything the "harness" emitter writes tests/emit_objc/golden_harness/<spec>/.
// MTLGEN_UPDATE_GOLDEN=1 rewrites them.
#include "golden.h"

namespace mtlgen::testing {
namespace {

class ObjcGolden : public ::testing::TestWithParam<std::string> {};

// A family's spec loads as its kernels, then the family: one snapshot holds all their files.
TEST_P(ObjcGolden, MatchesSnapshot) {
  auto kernels = load({GetParam()});
  ASSERT_FALSE(kernels.empty());
  expect_matches_golden(run_emitter("objc", kernels), fs::path("tests/emit_objc/golden") / stem(GetParam()));
}

TEST_P(ObjcGolden, HarnessMatchesSnapshot) {
  auto kernels = load({GetParam()});
  ASSERT_FALSE(kernels.empty());
  expect_matches_golden(run_emitter("harness", kernels), fs::path("tests/emit_objc/golden_harness") / stem(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Specs, ObjcGolden, ::testing::ValuesIn(snapshot_specs("tests/emit_objc/in")),
                         [](const auto& info) { return stem(info.param); });

}  // namespace
}  // namespace mtlgen::testing
