// What the loop form of a kernel (the MSL front end's msl_loop_rewrite.cpp) calls: it runs a
// whole threadgroup, each barrier-free region as `each(run, region)` over the threads in the
// run's lane order. A barrier or simd function at the end of a region only arrives (the runtime
// completes it with the last arrival, worker.cpp), and the next region reads its result with
// `result<R>()`. Values a later region uses live in per-thread frames.
#pragma once
#pragma GCC system_header

#include <cstring>
#include <type_traits>

#include "mtlsim/exec.h"

namespace mtlsim::loops {

inline uint32_t members(const detail::SimdGroup& sg) {
  return sg.members == ~0u ? kSimdWidth : uint32_t(__builtin_popcount(sg.members));
}

// A simdgroup block (a loop or branch around simd functions whose path is the same for the lanes of
// each simdgroup, msl_loop_rewrite_control.cpp): a function of the simdgroup and its lead lane that
// runs the whole loop for that simdgroup, its regions through simd_run, and returns the lane that
// arrived last.
template <class F>
struct Block {
  F run;
};
template <class F>
Block<F> block(F f) {
  return {f};
}
template <class F>
inline constexpr bool is_block = false;
template <class F>
inline constexpr bool is_block<Block<F>> = true;

// An empty region of a simdgroup block (a loop body's stretch without statements, a skipped
// branch's): it runs nothing, only passes the lead on to the simdgroup's last lane in lane order,
// as the lanes running through it would.
struct Pass {};

// Simdgroup `sg` runs on through the regions left: `lead` (the last to arrive) first, then the
// others in lane order; the last of them is the last to arrive at the next simd function. One call
// site per region, so each of its instructions has one address (poison reports are per address).
// Returns the lane that ran last.
template <class F, class... Rest>
[[gnu::always_inline]] inline uint32_t run_on(const detail::LoopRun& run, const detail::SimdGroup& sg, uint32_t lead,
                                              F& region, Rest&... rest) {
  uint32_t last = lead;
  if constexpr (is_block<F>) {
    last = region.run(sg, lead);
  } else if constexpr (std::is_same_v<F, Pass>) {
    const uint16_t* lanes = run.simd_order + sg.index * kSimdWidth;
    const uint32_t n = members(sg);
    if (n > 1 || lanes[0] != lead) last = lanes[n - 1] != lead ? lanes[n - 1] : lanes[n - 2];
  } else {
    const uint16_t* lanes = run.simd_order + sg.index * kSimdWidth;
    const uint32_t n = members(sg);
    detail::Lane* const all = run.lanes;
    for (uint32_t k = 0; k <= n; ++k) {
      const uint32_t t = k == 0 ? lead : lanes[k - 1];
      if (k > 0 && t == lead) continue;
      detail::tls_lane = &all[t];
      region(t);
      last = t;
    }
    if (sg.pending) detail::simd_complete(all[last]);  // the region ended at a simd function
  }
  if constexpr (sizeof...(Rest) > 0) return run_on(run, sg, last, rest...);
  else return last;
}

// The regions of a simdgroup block between its headers, run by its simdgroup as run_on runs them.
template <class... Regions>
[[gnu::always_inline]] inline uint32_t simd_run(const detail::LoopRun& run, const detail::SimdGroup& sg, uint32_t lead,
                                                Regions&&... regions) {
  return run_on(run, sg, lead, regions...);
}

// After the last region of a stretch: releases the barrier that ends it (every thread has arrived)
// and completes any simd function a last region ended at (a result no region reads). Only the
// inline arrivals (mtlsim/exec.h) leave them pending; the race detector's go through the runtime.
inline void end_segment(const detail::LoopRun& run) {
  detail::Arrivals* const a = detail::tls_arrivals;
  if (a == nullptr) return;
  const uint32_t simdgroups = (run.size + kSimdWidth - 1) / kSimdWidth;
  for (uint32_t s = 0; s < simdgroups; ++s) {
    detail::Lane& lead = run.lanes[run.simd_order[s * kSimdWidth]];
    if (lead.simd->pending) {
      detail::tls_lane = &lead;
      detail::simd_complete(lead);
    }
  }
  if (a->barrier_pending) {
    detail::Lane& last = run.lanes[run.order[run.size - 1]];
    detail::tls_lane = &last;
    detail::barrier_release(last);
  }
}

// Runs the regions of a stretch between threadgroup barriers, each but the last ending at a simd
// function, as the fiber path orders them: threads start in lane order and each runs until it
// reaches a simd function; when the last lane of a simdgroup arrives, that lane runs on and then
// its simdgroup's other lanes, in lane order, ahead of threads yet to arrive (a simdgroup moves on
// as a unit), through every later region of the stretch. So lane orders expose the same races in
// both paths, and a simd function orders no threadgroup memory here either. A simdgroup block among
// the regions runs as the simdgroup reaches it: the threads of a simdgroup that arrive at its header
// wait there (an implicit simdgroup barrier, as PoCL puts one at a loop with a barrier) until the
// last arrives, then the simdgroup runs the whole loop or branch.
template <class First, class... Rest>
[[gnu::always_inline]] inline void segment(const detail::LoopRun& run, First&& first, Rest&&... rest) {
  // The run's fields in locals: read through `run`, they were loaded again for every thread (a
  // store of the kernel's may alias them).
  const uint32_t size = run.size;
  const uint16_t* const order = run.order;
  const bool* const closes = run.closes;
  detail::Lane* const lanes = run.lanes;
  for (uint32_t k = 0; k < size; ++k) {
    const uint32_t t = order[k];
    detail::tls_lane = &lanes[t];
    first(t);
    if constexpr (sizeof...(Rest) > 0) {
      if (!closes[k]) continue;  // its simdgroup's last lane is still to come
      if (lanes[t].simd->pending) detail::simd_complete(lanes[t]);
      run_on(run, *lanes[t].simd, t, rest...);
    }
  }
  end_segment(run);
}

// Thread t's builtins, computed from t (the per-thread contexts are a cache line or two each: reading
// them in every region cost more than the arithmetic); those of the threadgroup from thread 0's,
// copied once per threadgroup into a local of the loop form (`mtlsim_bi`): read from the run, they
// were loaded again in every region of every thread, since a store the kernel makes may alias them.
struct Builtins {
  explicit Builtins(const detail::LoopRun& run)
      : threads_per_threadgroup(run.contexts[0].threads_per_threadgroup),
        threadgroup_position_in_grid(run.contexts[0].threadgroup_position_in_grid),
        threadgroups_per_grid(run.contexts[0].threadgroups_per_grid),
        threads_per_grid(run.contexts[0].threads_per_grid),
        simdgroups_per_threadgroup(run.contexts[0].simdgroups_per_threadgroup),
        flat(threads_per_threadgroup.y == 1 && threads_per_threadgroup.z == 1) {}
  Dim3 threads_per_threadgroup, threadgroup_position_in_grid, threadgroups_per_grid, threads_per_grid;
  uint32_t simdgroups_per_threadgroup;
  bool flat;  // a one-dimensional threadgroup
};
namespace builtin {
inline uint32_t thread_index_in_threadgroup(const Builtins&, uint32_t t) { return t; }
inline uint32_t thread_index_in_simdgroup(const Builtins&, uint32_t t) { return t % kSimdWidth; }
inline uint32_t simdgroup_index_in_threadgroup(const Builtins&, uint32_t t) { return t / kSimdWidth; }
inline Dim3 thread_position_in_threadgroup(const Builtins& b, uint32_t t) {
  const Dim3 n = b.threads_per_threadgroup;
  if (b.flat) return {t, 0, 0};
  return {t % n.x, t / n.x % n.y, t / (n.x * n.y)};
}
inline Dim3 thread_position_in_grid(const Builtins& b, uint32_t t) {
  const Dim3 p = thread_position_in_threadgroup(b, t), n = b.threads_per_threadgroup, g = b.threadgroup_position_in_grid;
  return {g.x * n.x + p.x, g.y * n.y + p.y, g.z * n.z + p.z};
}
inline Dim3 threadgroup_position_in_grid(const Builtins& b, uint32_t) { return b.threadgroup_position_in_grid; }
inline Dim3 threads_per_threadgroup(const Builtins& b, uint32_t) { return b.threads_per_threadgroup; }
inline Dim3 threadgroups_per_grid(const Builtins& b, uint32_t) { return b.threadgroups_per_grid; }
inline Dim3 threads_per_grid(const Builtins& b, uint32_t) { return b.threads_per_grid; }
inline uint32_t simdgroups_per_threadgroup(const Builtins& b, uint32_t) { return b.simdgroups_per_threadgroup; }
inline uint32_t threads_per_simdgroup(const Builtins&, uint32_t) { return kSimdWidth; }
}  // namespace builtin

// The byte the module's -ftrivial-auto-var-init fills fresh locals with (0xFE, or 0 in the
// zeroed build): a per-thread frame starts as the thread's own local would.
[[gnu::noinline]] inline unsigned char auto_init_byte() {
  unsigned char probe[1];
  __asm__ volatile("" : : "r"(probe) : "memory");
  return probe[0];
}

// One slot of T per thread of the running threadgroup; `fresh`: filled as a fresh local would be
// (for a variable declared without a value; the others are written before they are read).
template <class T>
inline std::remove_cv_t<T>* frame(const detail::LoopRun&, bool fresh) {
  using S = std::remove_cv_t<T>;
  return static_cast<S*>(detail::loop_frame(sizeof(S), alignof(S), fresh ? int(auto_init_byte()) : -1));
}

// Stores a region's value in the thread's slot (arrays included) and returns the slot.
template <class S, class V>
inline S& keep(S& slot, const V& value) {
  if constexpr (std::is_array_v<S>) std::memcpy(&slot, &value, sizeof(S));
  else slot = value;
  return slot;
}

// The value a private variable declared without an initializer starts with in the loop form:
// -ftrivial-auto-var-init=pattern's 0xFE bytes, stated explicitly. Left to the flag, g++ may fold
// a read of the never-written variable into a value another path stored (a region runs as a loop
// over the threads), so the read would show up as a lane-order race instead of as
// uninitialised_private_read at its line (mtlsim/poison_hooks.h).
template <class T>
inline T private_fill() {
  if constexpr (std::is_trivially_copyable_v<T> && std::is_trivially_default_constructible_v<T>) {
    T v;
    std::memset(static_cast<void*>(&v), 0xFE, sizeof v);
    return v;
  } else {
    return T();
  }
}

// The result of the simd function this thread arrived at last (completed since).
template <class R>
inline R result() {
  const detail::Lane& me = *detail::tls_lane;
  R r;
  std::memcpy(static_cast<void*>(&r), me.simd->out + me.lane * sizeof(R), sizeof(R));
  return r;
}

}  // namespace mtlsim::loops
