// The median sim_bench reports its ratios with (sim_bench.cpp, counters_bench.cpp): the middle
// value, the upper of the two for an even count.
#pragma once

#include <algorithm>
#include <vector>

namespace sim_bench {

inline double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

}  // namespace sim_bench
