#include "mtlsim/access_counter.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>

#include "mtlsim/thread_context.h"

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

// ---- access sites ----

// One simdgroup access: window k of each lane's accesses to one watched range, a window being
// kAccessWindow consecutive accesses of the lane (a thread's N_READS consecutive loads count
// together, as the hardware's caches merge them): the byte ranges its lanes touched.
constexpr uint32_t kAccessWindow = 4;
struct GroupKey {
  uintptr_t range;     // begin of the watched range
  uint64_t simdgroup;  // threadgroup linear index * 32 + simdgroup index
  uint32_t k;
  bool operator==(const GroupKey&) const = default;
};
struct LaneKey {
  uintptr_t range;
  uint64_t thread;  // threadgroup linear index * 1024 + thread index
  bool operator==(const LaneKey&) const = default;
};
struct KeyHash {
  size_t operator()(const GroupKey& g) const { return std::hash<uint64_t>()(g.range * 0x9E3779B97F4A7C15ull ^ g.simdgroup * 31 ^ g.k); }
  size_t operator()(const LaneKey& l) const { return std::hash<uint64_t>()(l.range * 0x9E3779B97F4A7C15ull ^ l.thread); }
};
struct Group {
  uintptr_t pc = 0;    // the site that opened the window: the group counts for it
  uint32_t lanes = 0;  // bit per lane
  std::vector<std::pair<uintptr_t, uintptr_t>> spans;
};

// Guarded by a mutex: recording is the advisor's slow, opt-in mode and threadgroups may run on
// several workers.
struct SiteState {
  std::mutex mutex;
  std::atomic<bool> on{false};
  uint64_t sampled = 0;
  std::unordered_map<uintptr_t, size_t> index;  // pc -> sites
  std::vector<SiteCounts> sites;
  std::unordered_map<LaneKey, uint32_t, KeyHash> executions;
  std::unordered_map<GroupKey, Group, KeyHash> groups;
  std::map<std::pair<int, uint8_t>, SimdCounts> simd;
  uint64_t barriers = 0;
};

SiteState& site_state() {
  static SiteState state;
  return state;
}

uint64_t linear_threadgroup(const ThreadContext& c) {
  const Dim3 p = c.threadgroup_position_in_grid, n = c.threadgroups_per_grid;
  return p.x + uint64_t(n.x) * (p.y + uint64_t(n.y) * p.z);
}

SiteCounts& site_of(SiteState& s, uintptr_t pc, bool store, const WatchedRange& r) {
  auto [it, fresh] = s.index.try_emplace(pc, s.sites.size());
  if (fresh) s.sites.push_back(SiteCounts{pc, reinterpret_cast<const void*>(r.begin), store});
  return s.sites[it->second];
}

void record_site(uintptr_t pc, uintptr_t lo, uintptr_t hi, bool store, const WatchedRange& r) {
  SiteState& s = site_state();
  const ThreadContext* c = current_thread_context();
  std::lock_guard lock(s.mutex);
  SiteCounts& site = site_of(s, pc, store, r);
  ++site.accesses;
  site.bytes += hi - lo;
  if (!c) return;
  const uint64_t tg = linear_threadgroup(*c);
  if (tg >= s.sampled) return;
  site.sampled_bytes += hi - lo;
  const uint32_t k = s.executions[LaneKey{r.begin, tg * 1024 + c->thread_index_in_threadgroup}]++ / kAccessWindow;
  Group& g = s.groups[GroupKey{r.begin, tg * 32 + c->simdgroup_index_in_threadgroup, k}];
  if (!g.pc) g.pc = pc;
  g.lanes |= 1u << (c->thread_index_in_simdgroup & 31);
  g.spans.emplace_back(lo, hi);
}

uint64_t distinct_segments(const std::vector<std::pair<uintptr_t, uintptr_t>>& spans, uintptr_t size) {
  std::set<uintptr_t> segments;
  for (const auto& [lo, hi] : spans) {
    for (uintptr_t s = lo / size; s <= (hi - 1) / size; ++s) segments.insert(s);
  }
  return segments.size();
}

uint64_t distinct_bytes(std::vector<std::pair<uintptr_t, uintptr_t>> spans) {
  std::sort(spans.begin(), spans.end());
  uint64_t bytes = 0;
  uintptr_t covered = 0;  // end of the bytes counted so far
  for (const auto& [lo, hi] : spans) {
    const uintptr_t from = std::max(lo, covered);
    if (hi > from) bytes += hi - from;
    covered = std::max(covered, hi);
  }
  return bytes;
}

void fold_groups(SiteState& s) {
  for (const auto& [key, g] : s.groups) {
    SiteCounts& site = s.sites[s.index.at(g.pc)];
    ++site.simd_accesses;
    site.lanes += uint64_t(__builtin_popcount(g.lanes));
    const uint64_t bytes = distinct_bytes(g.spans);
    site.distinct_bytes += bytes;
    site.ideal_segments32 += (bytes + 31) / 32;
    site.segments32 += distinct_segments(g.spans, 32);
    site.segments64 += distinct_segments(g.spans, 64);
    site.segments128 += distinct_segments(g.spans, 128);
  }
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

void count_sites(uint64_t sampled_threadgroups) {
  SiteState& s = site_state();
  std::lock_guard lock(s.mutex);
  s.index.clear();
  s.sites.clear();
  s.executions.clear();
  s.groups.clear();
  s.simd.clear();
  s.barriers = 0;
  s.sampled = sampled_threadgroups;
  s.on.store(true, std::memory_order_release);
}

SiteReport take_site_report() {
  SiteState& s = site_state();
  std::lock_guard lock(s.mutex);
  s.on.store(false, std::memory_order_release);
  fold_groups(s);
  SiteReport report{std::move(s.sites), {}, s.barriers};
  for (const auto& [key, counts] : s.simd) report.simd.push_back(counts);
  s.index.clear();
  s.executions.clear();
  s.groups.clear();
  s.simd.clear();
  s.sites.clear();
  return report;
}

}  // namespace mtlsim

// Every byte the access covers inside a watched range counts once; with site recording on, the
// access also counts for its instruction.
extern "C" void mtlsim_count_access(uintptr_t address, size_t size, bool store, uintptr_t pc) {
  if (mtlsim::watched_count.load(std::memory_order_acquire) == 0) return;
  const bool sites = mtlsim::site_state().on.load(std::memory_order_relaxed);
  for (auto& r : mtlsim::ranges()) {
    const uintptr_t lo = std::max(address, r.begin), hi = std::min(address + size, r.end);
    if (lo >= hi) continue;
    auto* counts = store ? r.stores.get() : r.loads.get();
    for (uintptr_t a = lo; a < hi; ++a) counts[a - r.begin].fetch_add(1, std::memory_order_relaxed);
    if (sites) {
      mtlsim::record_site(pc, lo, hi, store, r);
      break;  // watched ranges do not overlap
    }
  }
}

extern "C" void mtlsim_count_barrier(int) {
  auto& s = mtlsim::site_state();
  if (!s.on.load(std::memory_order_relaxed)) return;
  std::lock_guard lock(s.mutex);
  ++s.barriers;
}

extern "C" void mtlsim_count_simd(uint8_t op, int line, uint32_t active_lanes) {
  auto& s = mtlsim::site_state();
  if (!s.on.load(std::memory_order_relaxed)) return;
  std::lock_guard lock(s.mutex);
  mtlsim::SimdCounts& c = s.simd[{line, op}];
  c.op = op;
  c.line = line;
  ++c.calls;
  c.active_lanes += active_lanes;
}
