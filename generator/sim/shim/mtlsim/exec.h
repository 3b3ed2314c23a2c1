// Execution state shared by the shim's inline collectives and the runtime (mtlgen_simrt).
// Not an API for kernels or launchers: the layout of these structs is an internal contract
// between shim/mtlsim/msl_simd.h and runtime/scheduler.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "mtlsim/thread_context.h"

namespace mtlsim::detail {

// Everything a simulated thread can wait at. Collectives are identified by (Op, line).
enum class Op : uint8_t {
  none,
  threadgroup_barrier,
  simdgroup_barrier,
  simd_sum,
  simd_product,
  simd_min,
  simd_max,
  simd_and,
  simd_or,
  simd_xor,
  simd_shuffle,
  simd_shuffle_down,
  simd_shuffle_up,
  simd_shuffle_xor,
  simd_shuffle_rotate_down,
  simd_shuffle_rotate_up,
  simd_broadcast,
  simd_broadcast_first,
  simd_prefix_inclusive_sum,
  simd_prefix_exclusive_sum,
  simd_prefix_inclusive_product,
  simd_prefix_exclusive_product,
  simd_any,
  simd_all,
  simd_ballot,
  simd_is_first,
  simd_active_threads_mask,
  simd_shuffle_and_fill_down,
  simd_shuffle_and_fill_up,
  quad_sum,
  quad_product,
  quad_min,
  quad_max,
  quad_and,
  quad_or,
  quad_xor,
  quad_broadcast_first,
  quad_prefix_inclusive_sum,
  quad_prefix_exclusive_sum,
  quad_prefix_inclusive_product,
  quad_prefix_exclusive_product,
  quad_shuffle,
  quad_broadcast,
  quad_shuffle_down,
  quad_shuffle_up,
  quad_shuffle_xor,
  quad_shuffle_rotate_down,
  quad_shuffle_rotate_up,
  quad_shuffle_and_fill_down,
  quad_shuffle_and_fill_up,
  quad_any,
  quad_all,
  simdgroup_load,  // simdgroup_matrix collectives (mtlsim/msl_simdgroup_matrix.h)
  simdgroup_store,
  simdgroup_multiply,
  simdgroup_multiply_accumulate,
};
const char* op_name(Op op) noexcept;

// Float NaN bit patterns that mark uninitialised threadgroup memory in this dispatch.
struct PoisonSet {
  static constexpr int kMax = 4;
  uint32_t f32[kMax];
  uint16_t f16[kMax], bf16[kMax];
  int n32 = 0, n16 = 0, nbf16 = 0;
};

// Where a collective's inputs first matched a poison pattern; lane < 0: none did. `tainted`: the
// arrived lanes whose results depend on a poisoned input (their results were made poison too).
struct PoisonHit {
  int lane = -1;
  uint32_t bits = 0;
  uint32_t tainted = 0;
};

struct SimdGroup;
// Type-specific body of one collective, instantiated in the kernel's TU: reads the inputs of
// the arrived lanes, checks them for poison, writes each arrived lane's result.
using CompleteFn = PoisonHit (*)(SimdGroup&, const PoisonSet&);

inline constexpr size_t kSlotBytes = 32;  // largest payload: a 4-vector of 64-bit elements

struct SimdGroup {
  // Lane l's input (output) of a collective on T sits at in + l * sizeof(T): packed, so the
  // completing lane reads all inputs (writes all results) with one copy.
  alignas(64) unsigned char in[kSimdWidth * kSlotBytes] = {};
  alignas(64) unsigned char out[kSimdWidth * kSlotBytes] = {};
  uint32_t arg[kSimdWidth] = {};  // per-lane operand: shuffle source, delta, mask
  uint32_t members = 0;      // lanes that exist (a partial last simdgroup has fewer)
  uint32_t active = 0;       // members that have not returned from the kernel
  uint32_t arrived = 0;      // lanes waiting at the pending collective
  Op op = Op::none;          // the pending collective, as the first arrival named it
  bool mismatch = false;     // some arrival named a different (op, line)
  int line = 0;
  CompleteFn complete = nullptr;
  uint32_t index = 0;        // simdgroup index in its threadgroup
  bool pending = false;      // the loop form: lanes arrived at a collective the region loop has not completed
};

// The per-thread state every barrier and collective touches; 16 bytes so that a threadgroup's
// lanes pack densely (their ThreadContexts live apart, read once per thread by the launcher).
struct Lane {
  SimdGroup* simd = nullptr;
  uint32_t bit = 0;       // 1u << lane
  uint16_t index = 0;     // linear thread index in the threadgroup
  uint8_t lane = 0;       // index in the simdgroup
  Op wait_op = Op::none;  // what the lane waits at (or last waited at); the line is kept apart
};

// The simulated thread running on this OS thread (null outside a dispatch). Plain TLS
// pointer, set at every fiber switch, read by every collective. initial-exec: a single
// %fs-relative load even from shared objects (no __tls_get_addr call on the hot path).
#define MTLSIM_TLS_FAST __attribute__((tls_model("initial-exec")))
extern thread_local constinit Lane* tls_lane MTLSIM_TLS_FAST;

// The `return` a lane executed last (kernel_source_begin.h): its .metal line and enclosing
// function (`__func__`). tls_return_marks points at the running worker's marks, one per lane,
// while a dispatch runs (null otherwise).
struct ReturnMark {
  int line = 0;
  const char* function = nullptr;
};
extern thread_local constinit ReturnMark* tls_return_marks MTLSIM_TLS_FAST;

// Blocks the calling lane, already deposited in sg.in/arg, until the collective completes.
// For simdgroup_barrier, arg holds the lane's mem_flags.
void simd_rendezvous(Lane& me, Op op, int line, CompleteFn complete);
// `flags`: the barrier's metal::mem_flags (the race detector orders only the memory they name).
void threadgroup_barrier(Lane& me, int line, uint32_t flags);
[[noreturn]] void outside_dispatch(Op op, int line);

// ---- threadgroup variables declared in kernel bodies (mtlsim/msl_threadgroup.h) ----

// Which NaN poison fills a fresh variable: that of its innermost element type.
enum class PoisonKind : uint8_t { f32, f16, bf16 };

// One declaration site (per template instantiation), built once on its first execution.
struct ThreadgroupVariableSite {
  const char* name;       // the variable's name in the kernel, for reports
  uint32_t bytes;         // sizeof(T)
  uint32_t alignment;     // alignof(T), at least 16 (Metal aligns threadgroup allocations to 16)
  uint32_t element_size;  // race detection granule: alignof of the innermost scalar or struct
  int line;               // the declaration's source line
  PoisonKind poison;
  uint32_t id;            // process-wide index of the site, from new_threadgroup_variable_id()
};

uint32_t new_threadgroup_variable_id();
// This threadgroup's storage for the site: the same for every thread of the threadgroup, filled
// with poison (or zeros, DispatchOptions::zero_threadgroup_variables) when the first thread of
// the threadgroup reaches the declaration.
void* threadgroup_variable(const ThreadgroupVariableSite& site);

// ---- the loop form (issue 17 item 2; mtlsim/msl_loops.h) ----

// What a kernel's loop form (the front end's rewrite, msl_loop_rewrite.cpp) needs of the running
// threadgroup: its threads in the run's lane order, their lanes and builtins. A barrier or simd
// function reached inside a region loop only arrives (the runtime does not switch); the last
// arrival completes it, so the next region reads the results.
struct LoopRun {
  const uint16_t* order = nullptr;  // thread indices in lane order
  uint32_t size = 0;                // threads per threadgroup
  Lane* lanes = nullptr;
  const ThreadContext* contexts = nullptr;  // every thread's builtins, filled for this threadgroup
  const uint16_t* simd_order = nullptr;     // [32 s, 32 s + n): simdgroup s's threads in lane order
  const bool* closes = nullptr;             // closes[k]: order[k] is the last of its simdgroup in lane order
};
// Storage for one per-thread value of `bytes` (aligned to `align`) for each thread of the running
// threadgroup, filled with the byte `fill` (the module's -ftrivial-auto-var-init byte; < 0: not
// filled); valid until the threadgroup ends.
void* loop_frame(size_t bytes, size_t align, int fill);

// The worker's bookkeeping of a threadgroup's barrier (worker.cpp), laid out here so that in the
// loop form, where an arrival only records itself and the region loop goes on, the shim records
// it inline (arrive_simd, arrive_barrier below) and the region loop completes it
// (mtlsim/msl_loops.h): one runtime call per completion instead of one per thread and sync point.
struct Arrivals {
  uint32_t alive = 0, barrier_waiting = 0;
  int barrier_line = 0;
  uint32_t barrier_flags = ~0u;  // mem_flags every arrival at the pending barrier named
  bool barrier_mismatch = false;
  bool barrier_pending = false;  // the loop form: some thread arrived at a barrier since the last release
};
// The running worker's, while it runs a loop form without the race detector (null otherwise:
// fibers, whose arrivals switch, take the runtime's simd_rendezvous and threadgroup_barrier).
extern thread_local constinit Arrivals* tls_arrivals MTLSIM_TLS_FAST;
// The loop form's completions, called by the region loop (mtlsim/msl_loops.h) once every lane of
// the simdgroup (thread of the threadgroup) has arrived: `last` is the lane that ran last. They
// complete the collective (the runtime's Worker::complete_simd, with its poison checks) or
// release the barrier, as the fiber path does.
void simd_complete(Lane& last);
void barrier_release(Lane& last);

// The loop form's arrivals: plain stores of where the lanes are, no count and no check. A count
// that every arrival updates made each thread of a region loop wait for the previous thread's store
// to it (store-to-load forwarding: 12% of rms_norm's loop form), and a per-lane record checked at
// each completion cost 8% more. Neither is needed: in a loop form every thread of a simdgroup (of
// the threadgroup, for a barrier) reaches the one sync point that ends the region it runs (the
// front end refuses a sync point under a lane-dependent branch or after a lane-dependent return),
// so the region loop knows when the last has arrived. Under the race detector the loop form's
// arrivals take the runtime's path (Worker::simd_arrive), which counts and checks every arrival.
[[gnu::always_inline]] inline void arrive_simd(SimdGroup& sg, Op op, int line, CompleteFn complete) {
  sg.op = op;
  sg.line = line;
  sg.complete = complete;
  sg.pending = true;
}
[[gnu::always_inline]] inline void arrive_barrier(Arrivals& a, int line) {
  a.barrier_line = line;
  a.barrier_pending = true;
}

inline Lane& current_lane(Op op, int line) {
  Lane* lane = tls_lane;
  if (__builtin_expect(lane == nullptr, 0)) outside_dispatch(op, line);
  return *lane;
}

}  // namespace mtlsim::detail
