// mtlsim — runs Metal compute kernels, compiled as C++ against the shim <metal_stdlib>, on
// the CPU with Metal's threadgroup / simdgroup execution model.
//
// Execution model
// ---------------
// * dispatch() runs a grid of threadgroups. Threadgroups are handed out through an atomic
//   counter to `workers` OS threads (the calling thread is worker 0; the others come from a
//   persistent pool). A threadgroup runs entirely on one OS thread.
// * Each thread of a threadgroup is a fiber (Boost.Context), created fresh per threadgroup on
//   a stack from the worker's preallocated pool (128 KiB + a guard page each; every worker
//   thread also has a sigaltstack, so a SIGSEGV handler can run after a stack overflow).
// * Lane order: initially every thread is queued in the dispatch's LaneOrder (forward =
//   thread index order, reverse, or a seeded per-threadgroup shuffle). A fiber runs until it
//   blocks (barrier, simd-group function) or returns, then switches directly to the next
//   ready fiber (no scheduler fiber in between); threads released by a barrier or collective
//   are re-queued in lane order, except that the last lane to reach a collective runs on.
//   Races on threadgroup memory are thus deterministic per order: run a kernel with several
//   orders (and seeds) and compare results.
// * A lane's fiber is reused for that lane in every threadgroup the worker runs (it parks
//   after the kernel returns); only fibers of abandoned threadgroups are dropped and made
//   afresh on the same stack.
// * Simdgroups are 32 consecutive linear thread indices. A simd-group function is a
//   rendezvous of the simdgroup's active lanes (lanes that returned from the kernel are
//   inactive); the last lane to arrive computes every lane's result.
// * threadgroup_barrier releases when every thread that has not returned has arrived.
// * Threadgroup memory (DispatchOptions::threadgroup_arrays) is allocated per worker and
//   filled with a poison pattern (default: the NaN poison_bits_f32()) at threadgroup start.
//
// Reported issues (SimIssue); the offending threadgroup is abandoned (its fibers are never
// resumed and their stacks are reused), the others keep running:
// * barrier_early_exit: a barrier was reached by some threads after others returned.
// * barrier_divergence: threads wait at barriers on different source lines.
// * simd_divergence: lanes of one simdgroup wait at different simd functions / lines, or some
//   at a simd function and some at a barrier. The simulator does not model the active mask
//   of lane-divergent branches: a simd function inside `if (lane < 16)` is reported too.
// * poison_in_collective: a simd function received a float/half/bfloat value whose bits are
//   a threadgroup poison pattern: uninitialised threadgroup memory reached it.
// * deadlock: no fiber can run but not all have returned.
// Only the first DispatchOptions::max_issues are kept (issues_total counts all).
//
// Limits: at most 1024 threads per threadgroup; `threadgroup` variables declared inside a
// kernel body are not shared (pass them as [[threadgroup(n)]] parameters); an exception
// escaping a kernel terminates the process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "mtlsim/thread_context.h"

namespace mtlsim {

using KernelThreadFn = void (*)(const ThreadContext&, void* user);

enum class LaneOrder { forward, reverse, shuffled };
const char* to_string(LaneOrder order) noexcept;

// Poison NaNs with a distinctive payload; arithmetic on x86 keeps a NaN operand's payload,
// so x*x or x+1 of poison still carries it when it reaches a collective.
constexpr uint32_t poison_bits_f32() { return 0x7FC0DEADu; }
constexpr uint16_t poison_bits_f16() { return 0x7EADu; }
constexpr uint16_t poison_bits_bf16() { return 0x7FEDu; }
// The same values as little-endian byte patterns for ThreadgroupArraySpec::poison.
std::vector<uint8_t> poison_pattern_f32();
std::vector<uint8_t> poison_pattern_f16();
std::vector<uint8_t> poison_pattern_bf16();

struct ThreadgroupArraySpec {
  size_t bytes = 0;
  std::vector<uint8_t> poison;  // repeated to fill the array; empty: poison_pattern_f32()
};

struct DispatchOptions {
  Dim3 threadgroups;  // threadgroups per grid
  Dim3 threads_per_threadgroup;
  std::vector<ThreadgroupArraySpec> threadgroup_arrays;
  LaneOrder order = LaneOrder::forward;
  uint64_t seed = 0;  // for LaneOrder::shuffled
  int workers = 0;    // 0: all cores
  std::string kernel_name;  // for reports
  size_t max_issues = 20;
};

struct SimIssue {
  enum class Kind {
    barrier_early_exit,
    barrier_divergence,
    simd_divergence,
    deadlock,
    poison_in_collective,
  };
  Kind kind;
  std::string message;  // complete: names kernel, line, threadgroup, threads, and a fix
  // Field names avoid `thread` / `threadgroup`, which the shim defines as macros.
  int line = 0;                  // kernel source line of the barrier / collective
  Dim3 threadgroup_position;     // the threadgroup it happened in
  uint32_t thread_index = 0;     // first offending thread (linear index in the threadgroup)
};
const char* to_string(SimIssue::Kind kind) noexcept;

struct DispatchResult {
  std::vector<SimIssue> issues;
  uint64_t issues_total = 0;  // including those beyond max_issues
  uint64_t fiber_switches = 0;
  uint64_t threadgroups_run = 0;
  bool ok() const { return issues_total == 0; }
};

// Runs fn(ctx, user) for every thread of the grid. Throws std::invalid_argument for an
// empty grid, more than 1024 threads per threadgroup, or more than 64 KiB of threadgroup
// memory. Concurrent calls are serialised; a kernel must not call dispatch() itself.
DispatchResult dispatch(const DispatchOptions& options, KernelThreadFn fn, void* user);

}  // namespace mtlsim
