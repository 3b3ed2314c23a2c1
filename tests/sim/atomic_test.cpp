// Atomics are real atomics: threadgroups run concurrently on two workers.
#include "sim_test_util.h"
// clang-format off
#include <kernels/atomics.metal>  // the simulator copy (see mtlsim_prepare_msl)
// clang-format on

namespace {

using namespace mtlsim;

struct AccumulateArgs {
  float fsum = 0;
  uint count = 0;
  int max_gid = -1;
  uint per_group_total = 0;
  const float* x;
};

void launch_accumulate(const ThreadContext& tc, void* user) {
  auto& a = *static_cast<AccumulateArgs*>(user);
  atomic_accumulate(reinterpret_cast<atomic<float>*>(&a.fsum), reinterpret_cast<atomic_uint*>(&a.count),
                    reinterpret_cast<atomic_int*>(&a.max_gid), reinterpret_cast<atomic_uint*>(&a.per_group_total),
                    a.x, static_cast<atomic_uint*>(tc.threadgroup_memory[0]), tc.thread_position_in_grid.x,
                    tc.thread_position_in_threadgroup.x);
}

TEST(Atomics, ManyThreadgroupsOnTwoWorkers) {
  const uint groups = 96, tg = 256, n = groups * tg;
  const std::vector<float> x(n, 0.5f);  // every partial sum is exact
  AccumulateArgs args;
  args.x = x.data();
  DispatchOptions o = test::grid_1d(groups, tg, "atomic_accumulate");
  o.threadgroup_arrays = {{sizeof(uint), {}}};
  o.workers = 2;
  const DispatchResult r = dispatch(o, launch_accumulate, &args);
  ASSERT_TRUE(r.ok()) << test::describe(r);
  EXPECT_EQ(args.fsum, 0.5f * n);
  EXPECT_EQ(args.count, n);
  EXPECT_EQ(args.max_gid, int(n - 1));
  EXPECT_EQ(args.per_group_total, n);
}

struct CasArgs {
  uint best_bits;
  const float* x;
};
void launch_cas_max(const ThreadContext& tc, void* user) {
  auto& a = *static_cast<CasArgs*>(user);
  atomic_cas_max(reinterpret_cast<atomic_uint*>(&a.best_bits), a.x, tc.thread_position_in_grid.x);
}

TEST(Atomics, CompareExchangeLoop) {
  const uint groups = 40, tg = 128;
  const std::vector<float> x = test::random_floats(groups * tg, 9, 0.0f, 100.0f);
  CasArgs args{std::bit_cast<uint>(0.0f), x.data()};
  DispatchOptions o = test::grid_1d(groups, tg, "atomic_cas_max");
  o.workers = 2;
  ASSERT_TRUE(dispatch(o, launch_cas_max, &args).ok());
  EXPECT_EQ(std::bit_cast<float>(args.best_bits), *std::max_element(x.begin(), x.end()));
}

TEST(Atomics, LayoutMatchesTheValueType) {
  static_assert(sizeof(atomic_uint) == 4 && alignof(atomic_uint) == 4);
  static_assert(sizeof(atomic<float>) == 4);
  atomic_int a{5};
  EXPECT_EQ(atomic_exchange_explicit(&a, 9, memory_order_relaxed), 5);
  EXPECT_EQ(atomic_fetch_sub_explicit(&a, 2, memory_order_relaxed), 9);
  EXPECT_EQ(atomic_fetch_or_explicit(&a, 8, memory_order_relaxed), 7);
  EXPECT_EQ(atomic_fetch_and_explicit(&a, 12, memory_order_relaxed), 15);
  EXPECT_EQ(atomic_fetch_min_explicit(&a, -3, memory_order_relaxed), 12);
  EXPECT_EQ(atomic_load_explicit(&a, memory_order_relaxed), -3);
}

}  // namespace
