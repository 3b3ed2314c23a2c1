// Helpers shared by the simulator tests. Include before any .metal file (the shim defines
// address-space macros that would break later headers).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "mtlsim/runtime.h"

namespace mtlsim::test {

// The 1-based line of the first line in kernels/<file> that contains `marker`; kernels tag
// the lines tests expect in reports with `// MARK:<name>`.
inline int line_of(const std::string& file, const std::string& marker) {
  std::ifstream in(std::string(MTLSIM_TEST_KERNEL_DIR) + "/" + file);
  std::string text;
  for (int line = 1; std::getline(in, text); ++line)
    if (text.find(marker) != std::string::npos) return line;
  ADD_FAILURE() << "marker " << marker << " not found in " << file;
  return -1;
}

inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& f : v) f = dist(rng);
  return v;
}

inline DispatchOptions grid_1d(uint32_t threadgroups, uint32_t threads, const char* name) {
  DispatchOptions o;
  o.threadgroups = {threadgroups, 1, 1};
  o.threads_per_threadgroup = {threads, 1, 1};
  o.kernel_name = name;
  return o;
}

inline std::string describe(const DispatchResult& r) {
  std::string s;
  for (const SimIssue& i : r.issues) s += i.message + "\n";
  return s;
}

constexpr LaneOrder kAllOrders[] = {LaneOrder::forward, LaneOrder::reverse, LaneOrder::shuffled};

}  // namespace mtlsim::test
