#include "worker.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>

namespace mtlsim::detail {

thread_local constinit Lane* tls_lane MTLSIM_TLS_FAST = nullptr;
thread_local constinit Arrivals* tls_arrivals MTLSIM_TLS_FAST = nullptr;
thread_local constinit ReturnMark* tls_return_marks MTLSIM_TLS_FAST = nullptr;
namespace {
thread_local constinit Worker* tls_worker MTLSIM_TLS_FAST = nullptr;

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
}  // namespace

Worker::Worker()
    : stacks_(kMaxThreads, kStackBytes) {}

Worker& this_thread_worker() {
  static thread_local std::unique_ptr<Worker> worker;
  if (!worker) worker = std::make_unique<Worker>();
  return *worker;
}

void Worker::run(DispatchJob& job) {
  job_ = &job;
  tls_worker = this;
  tls_return_marks = returns_;
  switches_ = threadgroups_run_ = threadgroups_as_loops_ = 0;
  prepare_dispatch();
  for (;;) {
    const uint64_t i = job.next_threadgroup.fetch_add(1, std::memory_order_relaxed);
    if (i >= job.total_threadgroups) break;
    const uint64_t linear = job.opts.only_threadgroups.empty() ? i : job.opts.only_threadgroups[i];
    if (job.group_fn) run_threadgroup_loops(linear);
    else run_threadgroup(linear);
  }
  job.fiber_switches += switches_;
  job.threadgroups_run += threadgroups_run_;
  job.threadgroups_as_loops += threadgroups_as_loops_;
  tls_worker = nullptr;
  tls_return_marks = nullptr;
  job_ = nullptr;
}

// Builtins and masks that are the same for every threadgroup of the dispatch.
void Worker::prepare_dispatch() {
  const DispatchOptions& o = job_->opts;
  size_ = uint32_t(o.threads_per_threadgroup.volume());
  simdgroups_ = (size_ + kSimdWidth - 1) / kSimdWidth;
  const size_t image_bytes = job_->poisoned_image.size();
  tg_pointers_.clear();
  tg_regions_.clear();
  for (size_t i = 0; i < job_->array_offsets.size(); ++i) {
    tg_pointers_.push_back(tg_memory_.data() + job_->array_offsets[i]);
    const ThreadgroupArraySpec& a = o.threadgroup_arrays[i];
    tg_regions_.push_back({static_cast<const unsigned char*>(tg_pointers_.back()), a.bytes, std::max<size_t>(a.element_size, 1), a.name.c_str(), false});
  }
  // 64-aligned, so the 16-byte alignment of small variables costs no padding.
  const auto arena_at = (reinterpret_cast<uintptr_t>(tg_memory_.data()) + image_bytes + 63) & ~uintptr_t(63);
  unsigned char* arena = reinterpret_cast<unsigned char*>(arena_at);
  variables_.start_dispatch(arena, job_->array_bytes, o.zero_threadgroup_variables);
  const Dim3 tpt = o.threads_per_threadgroup, grid = o.threadgroups;
  for (uint32_t i = 0; i < size_; ++i) {
    Lane& l = lanes_[i];
    ThreadContext& c = contexts_[i];
    c.thread_position_in_threadgroup = {i % tpt.x, i / tpt.x % tpt.y, i / (tpt.x * tpt.y)};
    c.threads_per_threadgroup = tpt;
    c.threadgroups_per_grid = grid;
    c.threads_per_grid = {grid.x * tpt.x, grid.y * tpt.y, grid.z * tpt.z};
    c.thread_index_in_threadgroup = i;
    c.thread_index_in_simdgroup = i % kSimdWidth;
    c.simdgroup_index_in_threadgroup = i / kSimdWidth;
    c.simdgroups_per_threadgroup = simdgroups_;
    c.threads_per_simdgroup = kSimdWidth;
    c.threadgroup_memory = tg_pointers_.data();
    l.simd = &simds_[i / kSimdWidth];
    l.bit = 1u << (i % kSimdWidth);
    l.index = uint16_t(i);
    l.lane = uint8_t(i % kSimdWidth);
    all_stacks_[i] = uint16_t(size_ - 1 - i);
  }
  for (uint32_t s = 0; s < simdgroups_; ++s) {
    const uint32_t n = std::min(kSimdWidth, size_ - s * kSimdWidth);
    simds_[s].members = n == 32 ? ~0u : (1u << n) - 1;
    simds_[s].index = s;
  }
  if (o.order != LaneOrder::shuffled) build_order(0);
  race_ = job_->race.get();
  if (race_) race_->start(tg_pointers_.data(), arena, ThreadgroupVariables::kMetalLimitBytes);
}

// order_: the lane order of the threadgroup; simd_order_: the same order grouped by simdgroup
// (simd_order_[32*s .. 32*s+n) lists simdgroup s's threads), used to re-queue released lanes.
void Worker::build_order(uint64_t threadgroup_linear) {
  const LaneOrder order = job_->opts.order;
  for (uint32_t i = 0; i < size_; ++i) order_[i] = uint16_t(order == LaneOrder::reverse ? size_ - 1 - i : i);
  if (order == LaneOrder::shuffled) {
    uint64_t state = job_->opts.seed * 0x100000001B3ull ^ (threadgroup_linear + 1) * 0x9E3779B97F4A7C15ull;
    for (uint32_t i = size_ - 1; i > 0; --i) std::swap(order_[i], order_[splitmix64(state) % (i + 1)]);
  }
  uint32_t fill[kMaxSimdgroups] = {};
  for (uint32_t k = 0; k < size_; ++k) {
    const uint32_t t = order_[k], s = t / kSimdWidth;
    simd_order_[s * kSimdWidth + fill[s]++] = uint16_t(t);
    closes_[k] = fill[s] == std::min(kSimdWidth, size_ - s * kSimdWidth);  // its simdgroup's members
  }
}

void Worker::reset_threadgroup(uint64_t linear) {
  const Dim3 grid = job_->opts.threadgroups, tpt = job_->opts.threads_per_threadgroup;
  tg_position_ = {uint32_t(linear % grid.x), uint32_t(linear / grid.x % grid.y),
                  uint32_t(linear / (uint64_t(grid.x) * grid.y))};
  tg_origin_ = {tg_position_.x * tpt.x, tg_position_.y * tpt.y, tg_position_.z * tpt.z};
  std::memset(states_, int(LaneState::not_started), size_);
  for (uint32_t s = 0; s < simdgroups_; ++s) {
    SimdGroup& sg = simds_[s];
    sg.active = sg.members;
    sg.arrived = 0;
    sg.mismatch = sg.pending = false;
  }
  arrivals_.alive = size_;
  done_ = arrivals_.barrier_waiting = 0;
  arrivals_.barrier_flags = ~0u;
  arrivals_.barrier_mismatch = abandoned_ = false;
  if (race_) race_->begin_threadgroup(linear);
  std::memcpy(tg_memory_.data(), job_->poisoned_image.data(), job_->poisoned_image.size());
  variables_.start_threadgroup();
  if (job_->opts.order == LaneOrder::shuffled) build_order(linear);
  std::memcpy(queue_, order_, size_ * sizeof(uint16_t));
  queue_head_ = 0;
  queue_tail_ = size_;
  // Every stack is free again (an abandoned threadgroup's suspended lanes are simply dropped);
  // stack 0 is handed out first.
  free_count_ = size_;
  std::memcpy(free_stacks_, all_stacks_, size_ * sizeof(uint16_t));
}

void Worker::run_threadgroup(uint64_t linear) {
  reset_threadgroup(linear);
  resume(pop(), &main_sp_);  // back when no lane is ready any more, or the threadgroup is abandoned
  running_stack_ = -1;
  tls_lane = nullptr;
  if (!abandoned_ && done_ != size_) report_stall();
  commit_compares(0, true);
  ++threadgroups_run_;
}

// The builtins that depend on the threadgroup, filled in as the thread starts (rather than for
// all threads at threadgroup start, so the context is still in cache when the kernel reads it).
inline const ThreadContext& Worker::fill_context(const Lane& me) {
  ThreadContext& c = contexts_[me.index];
  c.threadgroup_position_in_grid = tg_position_;
  c.thread_position_in_grid = {tg_origin_.x + c.thread_position_in_threadgroup.x,
                               tg_origin_.y + c.thread_position_in_threadgroup.y,
                               tg_origin_.z + c.thread_position_in_threadgroup.z};
  return c;
}

// A returned lane no longer counts: it may complete a collective or a barrier waiting on it.
inline void Worker::lane_returned(Lane& me) {
  states_[me.index] = LaneState::done;
  ++done_;
  --arrivals_.alive;
  SimdGroup& sg = *me.simd;
  sg.active &= ~me.bit;
  if (sg.arrived != 0 && sg.arrived == sg.active) complete_simd(sg, me, 0);
  if (arrivals_.barrier_waiting != 0 && arrivals_.barrier_waiting == arrivals_.alive) release_barrier(me);
}

// ---- stacks and switches ----
// A stack is not tied to a lane. A runner (runner_main) runs lanes one after another as plain
// calls on its stack: a lane that returns without blocking costs no switch, and the runner takes
// the next ready lane. A lane that blocks (barrier, simd function) keeps the runner's stack, and
// the next ready lane is either resumed on its own stack or, if it has not started yet, started
// by a runner on a free stack: the runner parked there (one whose lane returned while the next
// lane was to run elsewhere gives its stack back and waits on it), else a fresh one. So a
// threadgroup whose threads never block runs as one loop on one stack (fibers start lazily, at
// the first block), and the lane order is exactly that of one fiber per thread: run until
// blocked or returned, then the next ready lane in queue order.
// Whoever switches marks the target running; the resumed side sets tls_lane.

// Where a runner's frames start on `stack`. Stacks lie 132 KiB apart, so their tops fall on only
// 16 distinct offsets modulo 64 KiB (the span of the L2's set index): unstaggered, 32 of 512
// lanes' hot frames compete for each 16-way set and every switch missed L2. Staggering the top
// by 256-byte steps within the page, a different step for each run of 16 stacks, gives 256
// distinct offsets.
inline char* Worker::stack_top(uint32_t stack) const {
  return static_cast<char*>(stacks_.top(stack)) - (stack / 16 % 16) * 256;
}

// A suspended lane's stack is cold by the time it runs again (hundreds of lanes ran since): the
// switch into it stalled on its first load. The lane after the next one is known, so its top
// frames (the switch's saved registers up to the kernel's frame, a few hundred bytes) are
// fetched one switch ahead; for a lane yet to start, the top of the stack it will get.
// `taking`: stacks the next lane takes from the free list (1 if it starts now).
inline void Worker::prefetch_queued(uint32_t taking) const {
  if (queue_head_ == queue_tail_) return;
  const uint16_t later = queue_[queue_head_ & (kMaxThreads - 1)];
  const char* sp = nullptr;
  if (states_[later] == LaneState::ready) {
    sp = static_cast<const char*>(lane_sp_[later]);
  } else if (states_[later] == LaneState::not_started && free_count_ > taking) {
    const uint16_t stack = free_stacks_[free_count_ - 1 - taking];
    sp = parked_[stack] ? static_cast<const char*>(parked_[stack]) : stack_top(stack) - 384;
  }
  if (sp == nullptr) return;
  for (int line = 0; line < 4; ++line) __builtin_prefetch(sp + 64 * line);
}

// Leaves the running context (saving it in *save) for lane `next`, or for the worker thread's
// own context when next < 0.
inline void Worker::resume(int next, void** save) {
  ++switches_;
  if (next < 0) {
    running_stack_ = -1;
    return context_switch(save, main_sp_);
  }
  const bool fresh = states_[next] == LaneState::not_started;
  prefetch_queued(fresh ? 1 : 0);
  states_[next] = LaneState::running;
  if (!fresh) {
    running_stack_ = lane_stack_[next];
    return context_switch(save, lane_sp_[next]);
  }
  const uint16_t stack = free_stacks_[--free_count_];
  starting_ = uint16_t(next);
  running_stack_ = stack;
  if (void* runner = parked_[stack]) {  // the runner that gave this stack back starts the lane
    parked_[stack] = nullptr;
    return context_switch(save, runner);
  }
  context_switch(save, make_context(stack_top(stack), stacks_.stack_bytes() - 4096, &Worker::runner_entry, this));
}

void Worker::runner_entry(void* worker) { static_cast<Worker*>(worker)->runner_main(); }

void Worker::runner_main() {
  const uint16_t stack = uint16_t(running_stack_);
  int next = starting_;
  for (;;) {
    Lane& me = lanes_[next];
    states_[next] = LaneState::running;
    lane_stack_[next] = stack;
    tls_lane = &me;
    returns_[next] = {};
    job_->fn(fill_context(me), job_->user);
    lane_returned(me);
    next = pop();
    if (next >= 0 && states_[next] == LaneState::not_started) continue;  // no switch
    // The next lane runs elsewhere: this stack is free once we have left it (one OS thread).
    // The runner parks on it, and starts the next fresh lane that takes the stack (resume).
    free_stacks_[free_count_++] = stack;
    resume(next, &parked_[stack]);
    next = starting_;
  }
}

// The calling lane has queued itself or registered as waiting; run whoever is next.
inline void Worker::yield(Lane& me) {
  const int next = pop();
  if (next == int(me.index)) {
    states_[me.index] = LaneState::running;
    return;
  }
  resume(next, &lane_sp_[me.index]);
  tls_lane = &me;
}

// ---- the loop form (see loop_form.cpp): one runner calls the group function for the whole
// threadgroup; barriers and simd functions only arrive meanwhile (loop_mode_) ----

void Worker::run_threadgroup_loops(uint64_t linear) {
  reset_threadgroup(linear);
  // The regions read thread 0's context only (mtlsim::loops::builtin); another thread's is filled
  // when something asks for it (current_thread_context).
  start_context(lanes_[0]);
  frame_block_ = frame_used_ = 0;
  loop_run_ = LoopRun{order_, size_, lanes_, contexts_, simd_order_, closes_};
  loop_mode_ = true;
  // Arrivals record themselves inline (mtlsim/exec.h), but for the race detector's hooks.
  tls_arrivals = race_ ? nullptr : &arrivals_;
  arrivals_.barrier_pending = false;
  // The runner takes a free stack as a fresh lane would; an abandoning report switches back here.
  const uint16_t stack = free_stacks_[--free_count_];
  parked_[stack] = nullptr;  // the loop runner's frames replace a parked runner's
  running_stack_ = stack;
  ++switches_;
  context_switch(&main_sp_, make_context(stack_top(stack), stacks_.stack_bytes() - 4096, &Worker::loop_runner_entry, this));
  loop_mode_ = false;
  tls_arrivals = nullptr;
  running_stack_ = -1;
  tls_lane = nullptr;
  if (!abandoned_ && done_ != size_) report_stall();
  commit_compares(0, true);
  ++threadgroups_run_;
  ++threadgroups_as_loops_;
}

void Worker::loop_runner_entry(void* worker) { static_cast<Worker*>(worker)->loop_runner_main(); }

void Worker::loop_runner_main() {
  std::memset(static_cast<void*>(returns_), 0, size_ * sizeof(ReturnMark));  // {0, nullptr}: no `return` yet
  job_->group_fn(loop_run_, job_->user);
  // Every thread has run to its end (the front end lets a thread return only after the last
  // barrier or simd function, so none is missing from one).
  std::memset(states_, int(LaneState::done), size_);
  done_ = size_;
  arrivals_.alive = 0;
  void* gone;
  resume(-1, &gone);
  std::abort();  // nobody resumes a finished runner
}

// fill_context out of line (the loop form, and context() in worker.h).
const ThreadContext& Worker::start_context(const Lane& me) { return fill_context(me); }

// The first thread of the threadgroup to reach a variable's declaration.
void* Worker::enter_variable(const ThreadgroupVariableSite& site) {
  const ThreadgroupVariables::Placement p = variables_.enter(site);
  if (p.storage == nullptr) report_memory_limit(site, p.total_bytes);
  if (p.new_place && race_) race_->add_threadgroup_variable(site.name, p.storage, site.bytes, site.element_size);
  if (p.new_place) {
    tg_regions_.push_back({static_cast<const unsigned char*>(p.storage), site.bytes,
                           std::max<size_t>(site.element_size, 1), site.name, true});
  }
  return p.storage;
}

bool Worker::describe_threadgroup_address(uintptr_t address, char* out, size_t size) const noexcept {
  if (!tg_memory_.covers(address) || tg_regions_.empty()) return false;
  const NamedRegion *below = nullptr, *first = nullptr;  // the nearest start at or below the address, else the lowest
  for (const NamedRegion& c : tg_regions_) {
    if (!first || c.start < first->start) first = &c;
    if (reinterpret_cast<uintptr_t>(c.start) <= address && (!below || c.start > below->start)) below = &c;
  }
  const NamedRegion* r = below ? below : first;
  const auto offset = static_cast<long long>(address - reinterpret_cast<uintptr_t>(r->start));
  const auto width = static_cast<long long>(r->element_size);
  const long long element = offset >= 0 ? offset / width : -1 - (-offset - 1) / width;
  std::snprintf(out, size, "element %lld of threadgroup %s `%s`, which holds %zu elements%s", element,
                r->variable ? "variable" : "array", r->name ? r->name : "?", r->bytes / r->element_size,
                element < 0 ? " (before its start)" : "");
  return true;
}

void Worker::abandon(Lane& me) {
  abandoned_ = true;
  states_[me.index] = LaneState::running;  // not `done`: it is dropped where it stands
  void* gone;
  resume(-1, &gone);
  std::abort();  // an abandoned threadgroup's lanes are never resumed
}

// ---- rendezvous ----

namespace {
// A lane's arrival at its simdgroup's pending collective, counted (the fibers, and the loop form
// under the race detector; the loop form's own arrivals are mtlsim/exec.h's arrive_simd): the first
// arrival names it, a later one naming another (op, line) is a mismatch. True when the lane is the
// last active one to arrive.
[[gnu::always_inline]] inline bool note_simd_arrival(SimdGroup& sg, const Lane& me, Op op, int line,
                                                     CompleteFn complete) {
  if (sg.arrived == 0) {
    sg.op = op;
    sg.line = line;
    sg.complete = complete;
  } else if (sg.op != op || sg.line != line) {
    sg.mismatch = true;
  }
  sg.arrived |= me.bit;
  return sg.arrived == sg.active;
}
}  // namespace

inline void Worker::simd_arrive(Lane& me, Op op, int line, CompleteFn complete) {
  SimdGroup& sg = *me.simd;
  states_[me.index] = LaneState::at_simd;
  me.wait_op = op;
  wait_lines_[me.index] = line;
  if (!note_simd_arrival(sg, me, op, line, complete)) {
    if (loop_mode_) return;  // the region loop goes on with the next thread
    return yield(me);
  }
  complete_simd(sg, me, me.bit);  // the last lane to arrive runs on; the others are queued
  states_[me.index] = LaneState::running;
}

void Worker::complete_simd(SimdGroup& sg, Lane& me, uint32_t runs_on) {
  if (sg.mismatch) report_simd_divergence(sg, me);
  if (race_ && sg.op == Op::simdgroup_barrier) simdgroup_barrier_completed(sg);
  else if (race_) race_->simd_function(sg.index);
  hooks_muted_ = true;
  const PoisonHit hit = sg.complete(sg, job_->poison);
  hooks_muted_ = false;
  if (hit.lane >= 0) note_poison(sg, hit);
  const uint32_t queued = sg.arrived & ~runs_on;
  sg.arrived = 0;
  if (loop_mode_) return;  // the next region loop runs every lane
  // The released lanes run next, ahead of lanes still to reach this point, in lane order: a
  // simdgroup moves on as a unit, as on hardware, while its stacks are still in cache.
  const uint16_t* seq = &simd_order_[sg.index * kSimdWidth];
  for (uint32_t k = uint32_t(__builtin_popcount(sg.members)); k-- > 0;) {
    const uint16_t t = seq[k];
    if (queued >> (t % kSimdWidth) & 1u) {
      states_[t] = LaneState::ready;
      push_front(t);
    }
  }
}

// The barrier orders the memory that every arrival's mem_flags name (they normally agree).
void Worker::simdgroup_barrier_completed(const SimdGroup& sg) {
  uint32_t flags = ~0u;
  for (uint32_t m = sg.arrived; m; m &= m - 1) flags &= sg.arg[__builtin_ctz(m)];
  race_->simdgroup_barrier(sg.index, flags);
}

// The loop form's inline arrivals (arrive_simd, mtlsim/exec.h), once every lane of the simdgroup
// ran the region (none returns early in a loop form).
void Worker::simd_completed_inline(Lane& me) {
  SimdGroup& sg = *me.simd;
  sg.pending = false;
  sg.arrived = sg.active;
  complete_simd(sg, me, me.bit);
}

// The loop form's inline barrier arrivals (arrive_barrier, mtlsim/exec.h), once every thread ran
// the region.
void Worker::barrier_released_inline(Lane& me) {
  arrivals_.barrier_pending = false;
  release_barrier(me);
}

inline void Worker::barrier_arrive(Lane& me, int line, uint32_t flags) {
  states_[me.index] = LaneState::at_barrier;
  me.wait_op = Op::threadgroup_barrier;
  wait_lines_[me.index] = line;
  arrivals_.barrier_flags &= flags;
  if (arrivals_.barrier_waiting == 0) arrivals_.barrier_line = line;
  else if (line != arrivals_.barrier_line) arrivals_.barrier_mismatch = true;
  if (++arrivals_.barrier_waiting == arrivals_.alive) release_barrier(me);
  if (!loop_mode_) yield(me);
}

void Worker::release_barrier(Lane& me) {
  if (arrivals_.barrier_mismatch) report_barrier_divergence(me);
  if (done_ > 0) report_early_exit(me);
  if (race_) race_->threadgroup_barrier(arrivals_.barrier_flags, arrivals_.barrier_line);
  arrivals_.barrier_flags = ~0u;
  // Every thread waits here now (none returned, none ready), so the queue is empty and the
  // whole threadgroup is re-queued in lane order.
  arrivals_.barrier_waiting = 0;
  std::memcpy(queue_, order_, size_ * sizeof(uint16_t));
  queue_head_ = 0;
  queue_tail_ = size_;
  std::memset(states_, int(LaneState::ready), size_);
}

// ---- entry points used by the shim ----

void simd_rendezvous(Lane& me, Op op, int line, CompleteFn complete) {
  tls_worker->simd_arrive(me, op, line, complete);
}

void threadgroup_barrier(Lane& me, int line, uint32_t flags) { tls_worker->barrier_arrive(me, line, flags); }

void simd_complete(Lane& me) { tls_worker->simd_completed_inline(me); }

void barrier_release(Lane& me) { tls_worker->barrier_released_inline(me); }

void* threadgroup_variable(const ThreadgroupVariableSite& site) {
  if (__builtin_expect(tls_lane == nullptr, 0)) {
    std::fprintf(stderr, "mtlsim: threadgroup variable `%s` (line %d) declared outside mtlsim::dispatch; kernels "
                 "that declare threadgroup variables must run through the simulator runtime\n", site.name, site.line);
    std::abort();
  }
  return tls_worker->threadgroup_variable(site);
}

}  // namespace mtlsim::detail

// The instrumentation's calls (mtlsim/poison_hooks.h): only a kernel thread's count; the reference,
// compiled the same way, runs outside any lane.
extern "C" __attribute__((visibility("default"))) void mtlsim_poison_compared(uint32_t bits, uint32_t other, void* pc) {
  if (mtlsim::detail::tls_lane != nullptr)
    mtlsim::detail::tls_worker->poison_compared(bits, other, reinterpret_cast<uintptr_t>(pc));
}

extern "C" __attribute__((visibility("default"))) void mtlsim_poison_converted(uint32_t bits, uint32_t float_bits,
                                                                              uint32_t int_bits, bool int_signed, void* pc) {
  if (mtlsim::detail::tls_lane != nullptr)
    mtlsim::detail::tls_worker->poison_converted(bits, float_bits, int_bits, int_signed, reinterpret_cast<uintptr_t>(pc));
}

extern "C" __attribute__((visibility("default"))) void mtlsim_array_out_of_bounds(int line, int64_t index,
                                                                                 const char* array_type, void*) {
  if (mtlsim::detail::tls_lane != nullptr) mtlsim::detail::tls_worker->report_array_bounds(line, index, array_type);
}

namespace mtlsim {
bool describe_threadgroup_address(uintptr_t address, char* out, size_t size) noexcept {
  const detail::Worker* w = detail::tls_worker;
  return w != nullptr && w->describe_threadgroup_address(address, out, size);
}

uintptr_t current_stack_top() noexcept {
  const detail::Worker* w = detail::tls_worker;
  return w != nullptr ? w->running_stack_top() : 0;
}

const ThreadContext* current_thread_context() noexcept {
  const detail::Lane* lane = detail::tls_lane;
  return lane ? &detail::tls_worker->context(*lane) : nullptr;
}
}  // namespace mtlsim
