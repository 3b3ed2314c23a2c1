// Poison that decides something (DispatchResult::poison_uses): comparisons and float-to-integer
// conversions of never-written threadgroup memory, seen through the compiler instrumentation that
// verify's modules carry (this TU is compiled the same way: see CMakeLists.txt).
#include <map>
#include <utility>

#include "sim_test_util.h"
// clang-format off
#include <kernels/poison_uses.metal>  // the simulator copy (see mtlsim_prepare_msl)
// clang-format on

namespace {

using namespace mtlsim;
using Kind = PoisonUse::Kind;

int mark(const char* name) { return test::line_of("poison_uses.metal", std::string("MARK:") + name); }

using Kernel = void (*)(device float*, threadgroup float*, uint);

template <Kernel K>
void launch(const ThreadContext& tc, void* user) {
  K(static_cast<float*>(user), static_cast<float*>(tc.threadgroup_memory[0]), tc.thread_index_in_simdgroup);
}

DispatchResult run(KernelThreadFn fn, const char* name, LaneOrder order = LaneOrder::forward) {
  std::vector<float> out(32);
  DispatchOptions o = test::grid_1d(2, 32, name);
  o.threadgroup_arrays = {{32 * sizeof(float), {}}};
  o.order = order;
  return dispatch(o, fn, out.data());
}

// (kind, source line) -> the use, lines from the test binary's line table.
std::map<std::pair<Kind, int>, PoisonUse> by_line(const DispatchResult& r) {
  std::map<std::pair<Kind, int>, PoisonUse> out;
  for (const PoisonUse& u : r.poison_uses) {
    std::vector<RaceAccess> at{RaceAccess{}};
    at[0].pc = u.pc;
    resolve_access_sources(at);
    out[{u.kind, at[0].line}] = u;
  }
  return out;
}

std::string listed(const DispatchResult& r) {
  std::string s;
  for (const PoisonUse& u : r.poison_uses) s += describe(u, "k", "") + "\n";
  return s;
}

class PoisonUses : public ::testing::TestWithParam<LaneOrder> {};

TEST_P(PoisonUses, BranchOnPoisonFromAPrefixSum) {
  const DispatchResult r = run(launch<poison_branch>, "poison_branch", GetParam());
  EXPECT_TRUE(r.ok()) << test::describe(r);
  const auto uses = by_line(r);
  ASSERT_EQ(uses.size(), 1u) << listed(r);
  const auto it = uses.find({Kind::branch, mark("poison_branch")});
  ASSERT_NE(it, uses.end()) << listed(r);
  EXPECT_EQ(it->second.occurrences, 2u * 23u);  // lanes 9-31 of both threadgroups
  EXPECT_GE(it->second.thread_index, 9u);
  EXPECT_EQ(it->second.bits, poison_bits_f32());
  const std::string message = describe(it->second, "poison_branch", " at line 14");
  EXPECT_NE(message.find("poison_in_branch: kernel 'poison_branch': thread "), std::string::npos) << message;
  EXPECT_NE(message.find("compared uninitialised threadgroup memory (poison 0x7FC0DEAD) at line 14, 46 times in this run:"),
            std::string::npos) << message;
  std::printf("example report: %s\n", message.c_str());
}

// The conversion's range check (comparisons with the integer type's bounds) is part of the
// conversion: one index use, no branch.
TEST_P(PoisonUses, IndexFromPoisonThroughAShuffle) {
  const DispatchResult r = run(launch<poison_index>, "poison_index", GetParam());
  const auto uses = by_line(r);
  ASSERT_EQ(uses.size(), 1u) << listed(r);
  const auto it = uses.find({Kind::index, mark("poison_index")});
  ASSERT_NE(it, uses.end()) << listed(r);
  EXPECT_EQ(it->second.occurrences, 2u * 24u);
  EXPECT_EQ(it->second.integer_bits, 32u);
  EXPECT_FALSE(it->second.integer_signed);
  EXPECT_LT(it->second.thread_index, 24u);
}

INSTANTIATE_TEST_SUITE_P(Orders, PoisonUses, ::testing::ValuesIn(test::kAllOrders));

TEST(PoisonUsesOnLines, ComparisonThenConversionAreBothReported) {
  const auto uses = by_line(run(launch<poison_compare_then_index>, "poison_compare_then_index"));
  ASSERT_EQ(uses.size(), 2u);
  EXPECT_EQ(uses.count({Kind::branch, mark("then_compare")}), 1u);
  ASSERT_EQ(uses.count({Kind::index, mark("then_index")}), 1u);
  EXPECT_TRUE(uses.at({Kind::index, mark("then_index")}).integer_signed);
}

// Poison that collectives hand to lanes whose results nobody uses is no finding; nor is the
// collectives' own inspection of their inputs.
TEST(PoisonUsesOnLines, PoisonThatDecidesNothingIsNoUse) {
  const DispatchResult r = run(launch<poison_unused>, "poison_unused");
  EXPECT_TRUE(r.poison_uses.empty()) << listed(r);
  EXPECT_FALSE(r.poison_flows.empty());  // it did pass through the prefix sum
}

TEST(PoisonUsesOnLines, ZeroedThreadgroupMemoryHasNone) {
  std::vector<float> out(32);
  DispatchOptions o = test::grid_1d(1, 32, "poison_branch");
  o.threadgroup_arrays = {{32 * sizeof(float), {0}}};
  EXPECT_TRUE(dispatch(o, launch<poison_branch>, out.data()).poison_uses.empty());
}

void launch_half_and_uint(const ThreadContext& tc, void* user) {
  poison_half_and_uint(static_cast<float*>(user), static_cast<half*>(tc.threadgroup_memory[0]),
                       static_cast<uint*>(tc.threadgroup_memory[1]), tc.thread_index_in_simdgroup);
}

TEST(PoisonUsesOnLines, WidenedHalfAndIntegerPoison) {
  std::vector<float> out(32);
  DispatchOptions o = test::grid_1d(1, 32, "poison_half_and_uint");
  o.threadgroup_arrays = {{32 * sizeof(half), poison_pattern_f16()}, {32 * sizeof(uint), {}}};
  const DispatchResult r = dispatch(o, launch_half_and_uint, out.data());
  const auto uses = by_line(r);
  ASSERT_EQ(uses.size(), 2u) << listed(r);
  EXPECT_EQ(uses.at({Kind::branch, mark("half_compare")}).occurrences, 24u);
  EXPECT_EQ(uses.at({Kind::branch, mark("uint_compare")}).occurrences, 24u);
  EXPECT_EQ(uses.at({Kind::branch, mark("uint_compare")}).bits, poison_bits_f32());
}

}  // namespace
