#include "report.h"

#include <fmt/format.h>

namespace mtlsim::detail {

void IssueSink::add(SimIssue issue) {
  std::lock_guard lock(mutex_);
  ++total_;
  if (issues_.size() < max_) issues_.push_back(std::move(issue));
}

void IssueSink::add_poison_flow(SimIssue flow) {
  std::lock_guard lock(mutex_);
  for (const SimIssue& f : flows_)
    if (f.line == flow.line) return;
  if (flows_.size() < max_) flows_.push_back(std::move(flow));
}

void IssueSink::add_poison_use(const PoisonUse& use) {
  std::lock_guard lock(mutex_);
  for (PoisonUse& u : uses_) {
    if (u.kind == use.kind && u.pc == use.pc) {
      u.occurrences += use.occurrences;
      return;
    }
  }
  if (uses_.size() < max_) uses_.push_back(use);
}

void IssueSink::take(DispatchResult& result) {
  std::lock_guard lock(mutex_);
  result.poison_uses = std::move(uses_);
  result.poison_flows = std::move(flows_);
  result.issues = std::move(issues_);
  result.issues_total = total_;
}

std::string format_threads(const std::vector<uint32_t>& sorted) {
  std::string out = sorted.size() == 1 ? "thread " : "threads ";
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (i > 0) out += ", ";
    out += j == i ? fmt::format("{}", sorted[i]) : fmt::format("{}-{}", sorted[i], sorted[j]);
    i = j + 1;
  }
  return out;
}

std::string format_dim(const Dim3& d) { return fmt::format("({},{},{})", d.x, d.y, d.z); }

int race_distance(const DataRace& race) {
  if (!race.same_threadgroup()) return 2;
  return race.earlier.thread_index / kSimdWidth != race.later.thread_index / kSimdWidth ? 1 : 0;
}

}  // namespace mtlsim::detail
