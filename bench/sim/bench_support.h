// What sim_bench's two files (sim_bench.cpp, counters_bench.cpp) share: the median their ratios
// are reported with, and the inputs they draw.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace sim_bench {

// The middle value, the upper of the two for an even count.
inline double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// n standard-normal floats, the same for the same seed.
inline std::vector<float> normal_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& f : v) f = dist(rng);
  return v;
}

}  // namespace sim_bench
