#include "race_detector.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <link.h>

#include <algorithm>
#include <cstring>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <utility>

#include "report.h"

namespace mtlsim::detail {

RaceHooks race_hooks;

namespace {
constexpr uint32_t kMemDevice = 1, kMemThreadgroup = 2;  // metal::mem_flags bits

uint32_t simdgroup_of(uint32_t thread) { return thread / kSimdWidth; }

Dim3 position_of(uint64_t linear, const Dim3& grid) {
  return {uint32_t(linear % grid.x), uint32_t(linear / grid.x % grid.y), uint32_t(linear / (uint64_t(grid.x) * grid.y))};
}

// The span [lo, hi) of some regions as a hook window (lo, hi - lo); empty when there are none.
void window(uintptr_t lo, uintptr_t hi, uintptr_t& out_lo, uintptr_t& out_span) {
  out_lo = lo < hi ? lo : 0;
  out_span = lo < hi ? hi - lo : 0;
}
}  // namespace

void RaceDetector::FreeDeleter::operator()(void* p) const { std::free(p); }

void RaceDetector::BarrierLog::reset() {
  for (auto& c : cum) c.assign(1, 0);
}

void RaceDetector::BarrierLog::add(uint32_t flags) {
  cum[kDevice].push_back(cum[kDevice].back() + ((flags & kMemDevice) ? 1 : 0));
  cum[kThreadgroup].push_back(cum[kThreadgroup].back() + ((flags & kMemThreadgroup) ? 1 : 0));
}

namespace {
// The extent of the loaded object that starts at `base` (dladdr's dli_fbase): from there to the
// end of its last loaded segment; 0 if no object starts there.
uintptr_t object_bytes(uintptr_t base) {
  std::pair<uintptr_t, uintptr_t> want{base, 0};
  ::dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto& w = *static_cast<std::pair<uintptr_t, uintptr_t>*>(data);
        uintptr_t lo = std::numeric_limits<uintptr_t>::max(), hi = 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD) continue;
          lo = std::min<uintptr_t>(lo, info->dlpi_addr + ph.p_vaddr);
          hi = std::max<uintptr_t>(hi, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
        }
        if ((lo & ~uintptr_t(0xfff)) != w.first) return 0;
        w.second = hi - w.first;
        return 1;
      },
      &want);
  return want.second;
}
}  // namespace

RaceDetector::RaceDetector(const DispatchOptions& options, const void* kernel_code) : opts_(options) {
  Dl_info info{};
  if (kernel_code && ::dladdr(kernel_code, &info) && info.dli_fbase) {
    code_base_ = reinterpret_cast<uintptr_t>(info.dli_fbase);
    code_bytes_ = std::min<uintptr_t>(object_bytes(code_base_), std::numeric_limits<uint32_t>::max());
  }
  for (const TrackedBuffer& b : options.race_buffers)
    add_region(b.name, b.data, b.bytes, b.element_size, kDevice);
  const uint32_t threads = uint32_t(options.threads_per_threadgroup.volume());
  sg_logs_.resize((threads + kSimdWidth - 1) / kSimdWidth);
  simd_functions_.resize(sg_logs_.size());
  call_sites_.resize(size_t(threads) * kCallDepth);
  call_depth_.resize(threads);
  tg_log_.reset();
}

RaceDetector::~RaceDetector() {
  if (race_hooks.detector == this) race_hooks = RaceHooks{};
}

void RaceDetector::add_region(std::string name, const void* data, size_t bytes, size_t element_size, Space space,
                              bool variable) {
  if (bytes == 0 || data == nullptr) return;
  element_size = std::max<size_t>(element_size, 1);
  const size_t elements = (bytes + element_size - 1) / element_size;
  // calloc: large shadows come from mmap and only the touched pages cost memory.
  Cell* shadow = static_cast<Cell*>(std::calloc(elements, sizeof(Cell)));
  if (!shadow)
    throw std::invalid_argument(fmt::format("mtlsim: kernel '{}': no memory for the race detector's shadow of `{}` "
                                            "({} elements)", opts_.kernel_name, name, elements));
  const auto lo = reinterpret_cast<uintptr_t>(data);
  regions_.push_back(
      {lo, lo + bytes, element_size, space, variable, std::move(name), std::unique_ptr<Cell[], FreeDeleter>(shadow)});
}

void RaceDetector::start(void* const* threadgroup_arrays, const void* variable_arena, size_t arena_bytes) {
  for (size_t i = 0; i < opts_.threadgroup_arrays.size(); ++i) {
    const ThreadgroupArraySpec& a = opts_.threadgroup_arrays[i];
    add_region(a.name.empty() ? fmt::format("threadgroup array {}", i) : a.name, threadgroup_arrays[i], a.bytes,
               a.element_size, kThreadgroup);
  }
  uintptr_t lo[2] = {std::numeric_limits<uintptr_t>::max(), std::numeric_limits<uintptr_t>::max()}, hi[2] = {0, 0};
  for (const Region& r : regions_) {
    lo[r.space] = std::min(lo[r.space], r.lo);
    hi[r.space] = std::max(hi[r.space], r.hi);
  }
  // Variables are placed while the dispatch runs: watch their whole arena from the start.
  const auto arena = reinterpret_cast<uintptr_t>(variable_arena);
  lo[kThreadgroup] = std::min(lo[kThreadgroup], arena);
  hi[kThreadgroup] = std::max(hi[kThreadgroup], arena + arena_bytes);
  RaceHooks h;
  window(lo[kDevice], hi[kDevice], h.device_lo, h.device_span);
  window(lo[kThreadgroup], hi[kThreadgroup], h.tg_lo, h.tg_span);
  h.detector = this;
  race_hooks = h;
}

void RaceDetector::add_threadgroup_variable(const char* name, const void* data, size_t bytes, size_t element_size) {
  add_region(name, data, bytes, element_size, kThreadgroup, true);
}

void RaceDetector::begin_threadgroup(uint64_t linear) {
  settle_stores();  // before the runtime refills threadgroup memory
  current_tg_ = uint32_t(linear + 1);
  tg_log_.reset();
  for (BarrierLog& log : sg_logs_) log.reset();
  std::fill(simd_functions_.begin(), simd_functions_.end(), 0);
  simd_functions_at_barrier_.clear();
  barrier_line_at_.clear();
  std::fill(call_depth_.begin(), call_depth_.end(), 0);  // threads of an abandoned threadgroup never returned
}

void RaceDetector::enter(uintptr_t call_site) {
  const Lane* lane = tls_lane;
  if (lane == nullptr) return;
  const uint32_t depth = call_depth_[lane->index]++;
  if (depth < kCallDepth) call_sites_[size_t(lane->index) * kCallDepth + depth] = offset_of(call_site);
}

void RaceDetector::leave() {
  const Lane* lane = tls_lane;
  if (lane != nullptr && call_depth_[lane->index] > 0) --call_depth_[lane->index];
}

uint32_t RaceDetector::call_site_of(uint32_t thread) const {
  const uint32_t depth = call_depth_[thread];
  return depth > 0 && depth <= kCallDepth ? call_sites_[size_t(thread) * kCallDepth + depth - 1] : 0;
}

void RaceDetector::threadgroup_barrier(uint32_t flags, int line) {
  tg_log_.add(flags);
  simd_functions_at_barrier_.push_back(simd_functions_);
  barrier_line_at_.push_back(line);
  if (flags & kMemDevice) barrier_lines_[kDevice].insert(line);
  if (flags & kMemThreadgroup) barrier_lines_[kThreadgroup].insert(line);
}

void RaceDetector::simdgroup_barrier(uint32_t simdgroup, uint32_t flags) { sg_logs_[simdgroup].add(flags); }

void RaceDetector::simd_function(uint32_t simdgroup) { ++simd_functions_[simdgroup]; }

void RaceDetector::access(uintptr_t address, size_t size, uint8_t kind, uintptr_t pc) {
  const Lane* lane = tls_lane;
  if (lane == nullptr || size == 0) return;  // not a simulated thread
  if (!pending_.empty()) settle_stores();  // the store they announced has executed by now
  const Access now{current_tg_,
                   offset_of(pc),
                   call_site_of(lane->index),
                   tg_log_.count(),
                   sg_logs_[simdgroup_of(lane->index)].count(),
                   simd_functions_[simdgroup_of(lane->index)],
                   lane->index,
                   kind,
                   0};
  for (size_t i = 0; i < regions_.size(); ++i) {
    Region& r = regions_[i];
    if (address >= r.hi || address + size <= r.lo) continue;
    const uintptr_t lo = std::max(address, r.lo), hi = std::min(address + size, r.hi);
    for (size_t e = (lo - r.lo) / r.element_size; e <= (hi - 1 - r.lo) / r.element_size; ++e) {
      const uintptr_t first = r.lo + e * r.element_size;  // does the access cover the whole element?
      on_element(r, i, e, now, address <= first && address + size >= first + element_bytes(r, e));
    }
  }
}

void RaceDetector::on_element(Region& r, size_t region_index, size_t element, const Access& now, bool whole) {
  Cell& c = r.shadow[element];
  if (r.space == kThreadgroup) {  // threadgroup memory lives for one threadgroup
    if (c.write.tg != current_tg_) c.write = Access{};
    for (Access& a : c.read)
      if (a.tg != current_tg_) a = Access{};
  }
  if (c.write.tg != 0 && races(c.write, now, r.space) && !(whole && defer_store(region_index, element, c.write, now)))
    report(region_index, element, c.write, now);
  if (!(now.kind & kWrite)) return add_read(c, now, r.space);
  for (const Access& a : c.read)
    if (a.tg != 0 && races(a, now, r.space)) report(region_index, element, a, now);
  c.write = now;
  c.read[0] = c.read[1] = Access{};
}

// Keeps `now` and the one earlier read most likely to race with later accesses: one from another
// threadgroup races with every later access of this one; one from another simdgroup of this
// threadgroup with every access until the next covering threadgroup barrier; one from this
// simdgroup with other threads' accesses until the next covering barrier. Reads ordered before
// `now` are dropped: whatever races with them races with `now`. Plain reads rank above atomic ones
// (they race with atomic writes too).
void RaceDetector::add_read(Cell& c, const Access& now, Space space) const {
  Access keep{};
  int best = -1;
  for (const Access& old : c.read) {
    if (old.tg == 0) continue;
    const bool dominated = ordered(old, now, space) && (!(now.kind & kAtomic) || (old.kind & kAtomic));
    if (dominated) continue;
    const int reach = old.tg != now.tg ? 3 : simdgroup_of(old.thread) != simdgroup_of(now.thread) ? 2 : 1;
    const int rank = reach * 2 + ((old.kind & kAtomic) ? 0 : 1);
    if (rank > best) best = rank, keep = old;
  }
  c.read[0] = now;
  c.read[1] = keep;
}

// Does `earlier` happen before `now` (an access of the running threadgroup)?
bool RaceDetector::ordered(const Access& earlier, const Access& now, Space space) const {
  if (earlier.tg != now.tg) return false;  // threadgroups are never ordered
  if (earlier.thread == now.thread) return true;
  const std::vector<uint32_t>& tg = tg_log_.cum[space];
  if (tg[now.tg_barriers] > tg[earlier.tg_barriers]) return true;
  const uint32_t s = simdgroup_of(now.thread);
  if (simdgroup_of(earlier.thread) != s) return false;
  const std::vector<uint32_t>& sg = sg_logs_[s].cum[space];
  return sg[now.sg_barriers] > sg[earlier.sg_barriers];
}

bool RaceDetector::races(const Access& earlier, const Access& now, Space space) const {
  const bool conflict = ((earlier.kind | now.kind) & kWrite) && !(earlier.kind & now.kind & kAtomic);
  return conflict && !ordered(earlier, now, space);
}

RaceAccess RaceDetector::describe_access(const Access& a) const {
  RaceAccess r;
  r.write = a.kind & kWrite;
  r.atomic = a.kind & kAtomic;
  r.threadgroup_position = position_of(a.tg - 1, opts_.threadgroups);
  r.thread_index = a.thread;
  r.pc = a.pc ? code_base_ + a.pc : 0;
  r.call_site = a.call_site ? code_base_ + a.call_site : 0;
  return r;
}

bool RaceDetector::read_consumed_before_barrier(const Access& earlier, const Access& now) const {
  if (earlier.kind != kRead || !(now.kind & kWrite) || earlier.tg != now.tg || earlier.tg_barriers >= now.tg_barriers)
    return false;
  const std::vector<uint32_t>& at_next_barrier = simd_functions_at_barrier_[earlier.tg_barriers];
  return at_next_barrier[simdgroup_of(earlier.thread)] > earlier.simd_functions;
}

// Once per pair of pcs on one region; later occurrences count, and replace the example when
// their threads are further apart (so the suggested fix covers every occurrence).
void RaceDetector::report(size_t region_index, size_t element, const Access& earlier, const Access& now) {
  const bool consumed = read_consumed_before_barrier(earlier, now);
  const auto key = std::make_tuple(region_index, std::min(earlier.pc, now.pc), std::max(earlier.pc, now.pc), consumed);
  const auto [it, fresh] = seen_.try_emplace(key, races_.size());
  if (fresh) ++races_total_;
  if (!fresh && it->second >= races_.size()) return;  // beyond max_issues
  if (fresh && races_.size() >= opts_.max_issues) {
    it->second = std::numeric_limits<size_t>::max();
    return;
  }
  const Region& r = regions_[region_index];
  DataRace race;
  race.memory = r.name;
  race.threadgroup_memory = r.space == kThreadgroup;
  race.threadgroup_variable = r.variable;
  race.element = element;
  race.earlier = describe_access(earlier);
  race.later = describe_access(now);
  const bool same_simdgroup = simdgroup_of(earlier.thread) == simdgroup_of(now.thread);
  race.barrier_without_flags = earlier.tg == now.tg && (earlier.tg_barriers != now.tg_barriers ||
                                                        (same_simdgroup && earlier.sg_barriers != now.sg_barriers));
  if (consumed) race.execution_barrier_line = barrier_line_at_[earlier.tg_barriers];
  if (fresh) return races_.push_back(std::move(race));
  DataRace& kept = races_[it->second];
  race.occurrences = kept.occurrences + 1;
  if (race_distance(race) > race_distance(kept)) kept = std::move(race);
  else kept.occurrences = race.occurrences;
}

// The last element of a region may be cut short.
size_t RaceDetector::element_bytes(const Region& r, size_t element) {
  return std::min<size_t>(r.element_size, r.hi - r.lo - element * r.element_size);
}

// The instrumentation announces a store before it executes: remember the element's bytes now
// and compare once the store has happened (at this detector's next call).
bool RaceDetector::defer_store(size_t region_index, size_t element, const Access& earlier, const Access& now) {
  const Region& r = regions_[region_index];
  const bool plain_stores = earlier.kind == kWrite && now.kind == kWrite;
  if (opts_.report_same_value_stores || !plain_stores || r.element_size > sizeof(PendingStore::before)) return false;
  PendingStore p{region_index, element, earlier, now, {}};
  std::memcpy(p.before, reinterpret_cast<const void*>(r.lo + element * r.element_size), element_bytes(r, element));
  pending_.push_back(p);
  return true;
}

// Same-value store/store pairs are benign (as in Oclgrind): every thread of ggml's argmax stores
// the one result. Other pairs are reported as races.
void RaceDetector::settle_stores() {
  for (const PendingStore& p : pending_) {
    const Region& r = regions_[p.region];
    if (std::memcmp(p.before, reinterpret_cast<const void*>(r.lo + p.element * r.element_size),
                    element_bytes(r, p.element)) != 0)
      report(p.region, p.element, p.earlier, p.now);
  }
  pending_.clear();
}

void RaceDetector::finish(DispatchResult& result) {
  settle_stores();
  if (race_hooks.detector == this) race_hooks = RaceHooks{};
  for (DataRace& r : races_) {
    const auto& lines = barrier_lines_[r.threadgroup_memory ? kThreadgroup : kDevice];
    r.barrier_lines.assign(lines.begin(), lines.end());
  }
  result.races = std::move(races_);
  result.races_total = races_total_;
  if (opts_.keep_last_writes) result.last_writes = last_writes();
}

std::vector<std::vector<RaceAccess>> RaceDetector::last_writes() const {
  std::vector<std::vector<RaceAccess>> out;
  for (const TrackedBuffer& b : opts_.race_buffers) {
    out.emplace_back();
    for (const Region& r : regions_) {
      if (r.space != kDevice || r.lo != reinterpret_cast<uintptr_t>(b.data)) continue;
      const size_t elements = (r.hi - r.lo + r.element_size - 1) / r.element_size;
      for (size_t i = 0; i < elements; ++i) {
        const Access& w = r.shadow[i].write;
        out.back().push_back(w.tg != 0 ? describe_access(w) : RaceAccess{});
      }
      break;
    }
  }
  return out;
}

}  // namespace mtlsim::detail
