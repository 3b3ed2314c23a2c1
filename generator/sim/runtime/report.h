// Collecting and wording SimIssues.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "mtlsim/runtime.h"

namespace mtlsim::detail {

// Thread-safe: every worker of a dispatch reports into one sink. Keeps the first `max`.
class IssueSink {
 public:
  explicit IssueSink(size_t max) : max_(max) {}
  void add(SimIssue issue);
  // Poison that passed through a collective (DispatchResult::poison_flows): one per line.
  void add_poison_flow(SimIssue flow);
  // Poison that decided something (DispatchResult::poison_uses): one per kind and pc, counted.
  void add_poison_use(const PoisonUse& use);
  void take(DispatchResult& result);

 private:
  std::mutex mutex_;
  std::vector<SimIssue> issues_, flows_;
  std::vector<PoisonUse> uses_;
  uint64_t total_ = 0;
  size_t max_;
};

// "thread 5", "threads 0-15, 32, 40-47" for ascending indices.
std::string format_threads(const std::vector<uint32_t>& sorted);
std::string format_dim(const Dim3& d);

// How far apart a race's two threads are: 2 other threadgroups, 1 other simdgroups, 0 one
// simdgroup. A fix must reach that far (a simdgroup_barrier orders one simdgroup only).
int race_distance(const DataRace& race);

}  // namespace mtlsim::detail
