// One worker OS thread's fiber scheduler: runs threadgroups, each as fibers on this thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "context_switch.h"
#include "mtlsim/exec.h"
#include "mtlsim/runtime.h"
#include "race_detector.h"
#include "report.h"
#include "stack_pool.h"
#include "threadgroup_variables.h"

namespace mtlsim::detail {

// What the workers of one dispatch share.
struct DispatchJob {
  DispatchJob(const DispatchOptions& o, KernelThreadFn f, void* u);

  const DispatchOptions& opts;
  KernelThreadFn fn;
  KernelGroupFn group_fn;  // the loop form, when it runs (null: fibers)
  void* user;
  uint64_t total_threadgroups;  // to run: the grid's, or as many as DispatchOptions::only_threadgroups
  std::atomic<uint64_t> next_threadgroup{0};
  PoisonSet poison;
  std::vector<size_t> array_offsets;         // into one threadgroup's memory block
  size_t array_bytes = 0;                    // all arrays, as Metal counts them (16-byte aligned)
  std::vector<unsigned char> poisoned_image; // a freshly poisoned memory block
  IssueSink sink;
  std::unique_ptr<RaceDetector> race;  // with DispatchOptions::detect_races (one worker)
  std::atomic<uint64_t> fiber_switches{0}, threadgroups_run{0}, threadgroups_as_loops{0};
};

enum class LaneState : uint8_t { not_started, ready, running, at_barrier, at_simd, done };

class Worker {
 public:
  static constexpr uint32_t kMaxThreads = 1024;
  static constexpr uint32_t kMaxSimdgroups = kMaxThreads / kSimdWidth;
  static constexpr size_t kStackBytes = 128 * 1024;

  Worker();
  // Runs threadgroups of `job` until none is left.
  void run(DispatchJob& job);

  // Entry points of the shim's barriers and collectives (on this worker's OS thread), inlined
  // into the runtime's simd_rendezvous and threadgroup_barrier (worker.cpp): one call level less
  // between a kernel and its switch, and one frame less to reload when its lane resumes.
  [[gnu::always_inline]] inline void simd_arrive(Lane& me, Op op, int line, CompleteFn complete);
  [[gnu::always_inline]] inline void barrier_arrive(Lane& me, int line, uint32_t flags);
  // The last arrival in the loop form, where the shim records the others inline (mtlsim/exec.h).
  void simd_completed_inline(Lane& me);
  void barrier_released_inline(Lane& me);
  // A lane's builtins (in the loop form filled on demand: the regions read thread 0's only).
  const ThreadContext& context(const Lane& lane) { return loop_mode_ ? start_context(lane) : contexts_[lane.index]; }
  // "element 100000 of threadgroup array `t`, which holds 256 elements" for an address in this
  // worker's threadgroup memory or its guards; false for any other address. For crash handlers.
  bool describe_threadgroup_address(uintptr_t address, char* out, size_t size) const noexcept;
  // The highest address of the running lane's fiber stack (exclusive); 0 outside a lane.
  uintptr_t running_stack_top() const noexcept {
    return tls_lane && running_stack_ >= 0 ? reinterpret_cast<uintptr_t>(stacks_.top(uint32_t(running_stack_))) : 0;
  }
  // This threadgroup's storage for a threadgroup variable site (see ThreadgroupVariables).
  void* threadgroup_variable(const ThreadgroupVariableSite& site) {
    if (void* storage = variables_.find(site.id)) return storage;
    return enter_variable(site);
  }
  // The loop form's per-thread storage (mtlsim::detail::loop_frame).
  void* loop_frame(size_t bytes, size_t align, int fill);
  // From the instrumentation (mtlsim/poison_hooks.h, poison_uses.cpp), on the running lane: a
  // NaN (or the poison's bits as an integer) was compared with `other`; a float was converted
  // to an integer of `int_bits`.
  void poison_compared(uint32_t bits, uint32_t other, uintptr_t pc);
  void poison_converted(uint32_t bits, uint32_t float_bits, uint32_t int_bits, bool int_signed, uintptr_t pc);
  // From the bounds hook (mtlsim/poison_hooks.h): the running thread indexed an array outside it.
  [[noreturn]] void report_array_bounds(int line, int64_t index, const char* array_type);

 private:
  struct LaneEntry;

  void prepare_dispatch();
  void build_order(uint64_t threadgroup_linear);
  void reset_threadgroup(uint64_t threadgroup_linear);
  void run_threadgroup(uint64_t threadgroup_linear);

  // Fiber switching (see "Stacks and switches" in worker.cpp).
  static void runner_entry(void* worker);
  [[noreturn]] void runner_main();
  // The loop form: one runner calls the group function for the whole threadgroup (loops.cpp).
  static void loop_runner_entry(void* worker);
  [[noreturn]] void loop_runner_main();
  void run_threadgroup_loops(uint64_t threadgroup_linear);
  [[gnu::always_inline]] inline void resume(int next, void** save);
  [[gnu::always_inline]] inline void yield(Lane& me);
  [[gnu::always_inline]] inline void prefetch_queued(uint32_t taking) const;
  [[gnu::always_inline]] inline char* stack_top(uint32_t stack) const;
  const ThreadContext& start_context(const Lane& me);
  [[gnu::always_inline]] inline const ThreadContext& fill_context(const Lane& me);
  [[noreturn]] void abandon(Lane& me);
  void* enter_variable(const ThreadgroupVariableSite& site);

  void push(uint32_t lane) { queue_[queue_tail_++ & (kMaxThreads - 1)] = uint16_t(lane); }
  void push_front(uint32_t lane) { queue_[--queue_head_ & (kMaxThreads - 1)] = uint16_t(lane); }
  int pop() { return queue_head_ == queue_tail_ ? -1 : queue_[queue_head_++ & (kMaxThreads - 1)]; }

  void complete_simd(SimdGroup& sg, Lane& me, uint32_t runs_on);
  void simdgroup_barrier_completed(const SimdGroup& sg);
  void release_barrier(Lane& me);
  [[gnu::always_inline]] inline void lane_returned(Lane& me);

  // Reports (worker_report.cpp; here because they need the lane states).
  void report(SimIssue::Kind kind, int line, uint32_t thread, const std::string& what);
  std::vector<uint32_t> threads_where(uint32_t first, uint32_t count, LaneState state) const;
  std::string describe_waits(uint32_t first, uint32_t count) const;
  std::string describe_returns(const std::vector<uint32_t>& gone) const;
  [[noreturn]] void report_simd_divergence(SimdGroup& sg, Lane& me);
  void note_poison(const SimdGroup& sg, PoisonHit hit);
  [[noreturn]] void report_barrier_divergence(Lane& me);
  [[noreturn]] void report_early_exit(Lane& me);
  [[noreturn]] void report_memory_limit(const ThreadgroupVariableSite& site, size_t total_bytes);
  void report_stall();

  // Poison uses (poison_uses.cpp). A lane's last two poison comparisons wait: a conversion's
  // range check compares the value with the integer type's bounds just before its handler runs,
  // and those are part of the conversion, not branches.
  struct PendingCompare {
    uint32_t thread, bits, other;
    uintptr_t pc;
  };
  bool is_poison(uint32_t bits, uint32_t float_bits) const;
  void commit_compares(uint32_t thread, bool all_threads);
  void add_poison_use(const PoisonUse& use);
  std::vector<PendingCompare> pending_compares_;
  bool hooks_muted_ = false;  // while a collective's CompleteFn (shim code) inspects poison itself

  DispatchJob* job_ = nullptr;
  StackPool stacks_;
  AltStack alt_stack_;
  // Fixed-size arrays inside the (heap-allocated) worker: the hot path indexes them
  // straight off `this`.
  Lane lanes_[kMaxThreads];
  ThreadContext contexts_[kMaxThreads];
  int wait_lines_[kMaxThreads];    // source line each lane waits at (or last waited at)
  ReturnMark returns_[kMaxThreads];  // the `return` each lane executed last (kernel_source_begin.h)
  LaneState states_[kMaxThreads];  // dense, apart from Lane: rewritten at every release
  void* lane_sp_[kMaxThreads];          // a suspended lane's saved context
  uint16_t lane_stack_[kMaxThreads];     // the stack a started lane runs on
  uint16_t free_stacks_[kMaxThreads];    // stacks no lane holds (a LIFO: the warmest first)
  uint16_t all_stacks_[kMaxThreads];     // free_stacks_ at a threadgroup's start (size_ - 1 down to 0)
  // The runner parked on a free stack (its context), which starts the next lane to take the
  // stack without making a fresh context; null where none is (never used, or a lane's frames
  // were dropped there).
  void* parked_[kMaxThreads] = {};
  uint32_t free_count_ = 0;
  SimdGroup simds_[kMaxSimdgroups];
  uint16_t order_[kMaxThreads], simd_order_[kMaxThreads], queue_[kMaxThreads];
  bool closes_[kMaxThreads];  // closes_[k]: order_[k] is the last of its simdgroup in lane order
  uint32_t queue_head_ = 0, queue_tail_ = 0;
  // The arrays, then the variables' arena, between guards (arrays take at most 64 KiB, DispatchJob).
  GuardedRegion tg_memory_{64 * 1024 + ThreadgroupVariables::kArenaBytes + 64};
  struct NamedRegion {  // a threadgroup array or variable, for reports of faults
    const unsigned char* start;
    size_t bytes, element_size;
    const char* name;
    bool variable;
  };
  std::vector<NamedRegion> tg_regions_;  // arrays, then variables as they are placed
  ThreadgroupVariables variables_;
  std::vector<void*> tg_pointers_;

  void* main_sp_ = nullptr;  // the worker thread's own context while a lane runs
  int running_stack_ = -1;   // the stack executing now; -1: the worker thread's own
  uint16_t starting_ = 0;    // the lane a fresh runner starts with
  uint32_t size_ = 0, simdgroups_ = 0;
  uint32_t done_ = 0;
  // alive, and the pending barrier's arrivals, line and mem_flags (mtlsim/exec.h: the loop form's
  // arrivals record themselves there inline).
  Arrivals arrivals_;
  RaceDetector* race_ = nullptr;  // the dispatch's detector, if any
  bool abandoned_ = false;
  Dim3 tg_position_, tg_origin_;  // this threadgroup's position, and its first thread's
  uint64_t switches_ = 0, threadgroups_run_ = 0, threadgroups_as_loops_ = 0;
  // The loop form: barriers and simd functions only arrive (the last arrival completes them).
  bool loop_mode_ = false;
  LoopRun loop_run_;
  std::vector<std::unique_ptr<unsigned char[]>> frame_blocks_;  // loop_frame's storage
  std::vector<size_t> frame_block_bytes_;
  size_t frame_block_ = 0, frame_used_ = 0;
};

// This OS thread's worker, created on first use and kept for the thread's lifetime.
Worker& this_thread_worker();

}  // namespace mtlsim::detail
