// The kv_cache_update reference: the token lands in slot `position` of every head, in the cache
// type, and nothing else changes; a position at or past the capacity writes nothing.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kv_cache_update/kv_cache_update_reference.h"

namespace {

namespace k = mtlgen::kernels::kv_cache_update;
using mtlgen::half;

// 2 heads x 3 elements, capacity 4; the caches start as 100 + flat index.
struct Caches {
  std::vector<half> k_cache, v_cache;
  Caches() {
    for (int i = 0; i < 2 * 4 * 3; ++i) {
      k_cache.push_back(half(100.0f + float(i)));
      v_cache.push_back(half(-100.0f - float(i)));
    }
  }
};

Caches update_at(uint32_t position) {
  std::vector<float> key = {1, 2, 3, 4, 5, 6}, value = {-1, -2, -3, -4, -5, -6.0009765625f};
  std::vector<uint32_t> pos = {position};
  Caches c;
  k::reference<float, half>(k::Dims{2, 3, 4}, std::span<const float>(key), std::span<const float>(value),
                            std::span<const uint32_t>(pos), std::span<half>(c.k_cache), std::span<half>(c.v_cache));
  return c;
}

TEST(KvCacheUpdateReference, WritesTheSlotOfEveryHeadAndNothingElse) {
  Caches before, after = update_at(2);
  for (int i = 0; i < 24; ++i) {
    int head = i / 12, slot = (i / 3) % 4, j = i % 3;
    if (slot == 2) {
      EXPECT_EQ(float(after.k_cache[i]), float(head * 3 + j + 1)) << i;
    } else {
      EXPECT_EQ(float(after.k_cache[i]), float(before.k_cache[i])) << i;
      EXPECT_EQ(float(after.v_cache[i]), float(before.v_cache[i])) << i;
    }
  }
  // v[1, 2] = -6 - 2^-10 is not a half (spacing 2^-8 at 6): it rounds to the nearest, -6
  EXPECT_EQ(float(after.v_cache[(1 * 4 + 2) * 3 + 2]), -6.0f);
}

TEST(KvCacheUpdateReference, PositionAtOrPastCapacityWritesNothing) {
  Caches before;
  for (uint32_t position : {4u, 5u, 0xFFFFFFFFu}) {
    Caches after = update_at(position);
    for (int i = 0; i < 24; ++i) {
      EXPECT_EQ(float(after.k_cache[i]), float(before.k_cache[i])) << position << " " << i;
      EXPECT_EQ(float(after.v_cache[i]), float(before.v_cache[i])) << position << " " << i;
    }
  }
}

}  // namespace
