#include "mtlsim/access_counter.h"

#include <algorithm>
#include <atomic>
#include <memory>

namespace mtlsim {

namespace {

struct WatchedRange {
  uintptr_t begin = 0, end = 0;
  std::unique_ptr<std::atomic<uint32_t>[]> loads, stores;
};

// Few ranges at a time; the hooks only read the list, which changes between dispatches.
std::vector<WatchedRange>& ranges() {
  static std::vector<WatchedRange> watched;
  return watched;
}
std::atomic<size_t> watched_count{0};

std::vector<uint32_t> copy_counts(const std::atomic<uint32_t>* counts, size_t bytes) {
  std::vector<uint32_t> out(bytes);
  for (size_t i = 0; i < bytes; ++i) out[i] = counts[i].load(std::memory_order_relaxed);
  return out;
}

}  // namespace

void watch_accesses(const void* base, size_t bytes) {
  take_access_counts(base);
  WatchedRange r;
  r.begin = reinterpret_cast<uintptr_t>(base);
  r.end = r.begin + bytes;
  r.loads = std::make_unique<std::atomic<uint32_t>[]>(bytes);  // value-initialised: zero
  r.stores = std::make_unique<std::atomic<uint32_t>[]>(bytes);
  ranges().push_back(std::move(r));
  watched_count.store(ranges().size(), std::memory_order_release);
}

AccessCounts take_access_counts(const void* base) {
  auto& all = ranges();
  auto it = std::find_if(all.begin(), all.end(),
                         [&](const WatchedRange& r) { return r.begin == reinterpret_cast<uintptr_t>(base); });
  if (it == all.end()) return {};
  const size_t bytes = it->end - it->begin;
  AccessCounts counts{copy_counts(it->loads.get(), bytes), copy_counts(it->stores.get(), bytes)};
  all.erase(it);
  watched_count.store(all.size(), std::memory_order_release);
  return counts;
}

}  // namespace mtlsim

// Every byte the access covers inside a watched range counts once.
extern "C" void mtlsim_count_access(uintptr_t address, size_t size, bool store) {
  if (mtlsim::watched_count.load(std::memory_order_acquire) == 0) return;
  for (auto& r : mtlsim::ranges()) {
    const uintptr_t lo = std::max(address, r.begin), hi = std::min(address + size, r.end);
    if (lo >= hi) continue;
    auto* counts = store ? r.stores.get() : r.loads.get();
    for (uintptr_t a = lo; a < hi; ++a) counts[a - r.begin].fetch_add(1, std::memory_order_relaxed);
  }
}
