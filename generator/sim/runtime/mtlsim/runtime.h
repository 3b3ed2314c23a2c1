// mtlsim — runs Metal compute kernels, compiled as C++ against the shim <metal_stdlib>, on
// the CPU with Metal's threadgroup / simdgroup execution model.
//
// Execution model
// ---------------
// * dispatch() runs a grid of threadgroups. Threadgroups are handed out through an atomic
//   counter to `workers` OS threads (the calling thread is worker 0; the others come from a
//   persistent pool). A threadgroup runs entirely on one OS thread.
// * Threads start lazily: a thread runs as a plain call on a runner stack from the worker's
//   preallocated pool (128 KiB + a guard page each; every worker thread also has a
//   sigaltstack, so a SIGSEGV handler can run after a stack overflow). Only a thread that blocks
//   (barrier, simd-group function) keeps that stack as its fiber; the next thread then starts on
//   a free stack. A thread that returns without blocking costs no switch, so a threadgroup whose
//   threads never block runs as one loop on one stack. Switches go directly from fiber to fiber.
// * Lane order: threads start in the dispatch's LaneOrder (forward = thread index order,
//   reverse, or a seeded per-threadgroup shuffle). A thread runs until it blocks or returns,
//   then the next ready thread runs. When a simd-group function completes, the last lane to
//   arrive runs on and the simdgroup's other lanes run next, in lane order, before threads yet
//   to reach it; a barrier re-queues every thread in lane order. Races on threadgroup memory are
//   thus deterministic per order: run a kernel with several orders (and seeds) and compare.
// * The loop form (DispatchOptions::group_fn, made by the MSL front end where a kernel's barriers
//   and simd functions all sit at the top level of its body): a threadgroup runs as one call that
//   loops over the threads region by region (mtlsim/msl_loops.h), in the same order as the fibers
//   would run; barriers and simd functions then only arrive, and the last arrival completes them.
//   Reports, poison and lane orders are the same; detect_races always runs fibers.
// * Simdgroups are 32 consecutive linear thread indices. A simd-group function is a
//   rendezvous of the simdgroup's active lanes (lanes that returned from the kernel are
//   inactive); the last lane to arrive computes every lane's result.
// * threadgroup_barrier releases when every thread that has not returned has arrived.
// * Threadgroup memory (DispatchOptions::threadgroup_arrays) is allocated per worker and
//   filled with a poison pattern (default: the NaN poison_bits_f32()) at threadgroup start.
// * Threadgroup variables declared in kernel bodies (mtlsim::threadgroup_local, what the MSL
//   front end makes of `threadgroup float sums[32];`) live in a per-worker arena: a site gets its
//   place the first time any threadgroup of the worker reaches it (and keeps it for the rest of
//   the dispatch), and its storage is filled, when the first thread of each threadgroup reaches
//   the declaration, with the poison of its innermost element type (f32, half or bfloat; f32
//   for others) or with zeros (DispatchOptions::zero_threadgroup_variables). All threads of a
//   threadgroup share it; other threadgroups (on other workers, or later) have their own.
//
// Reported issues (SimIssue); the offending threadgroup is abandoned (its fibers are never
// resumed and their stacks are reused), the others keep running:
// * barrier_early_exit: a barrier was reached by some threads after others returned (naming the
//   `return` each returned at where the kernel's source was compiled between
//   mtlsim/kernel_source_begin.h and kernel_source_end.h, as verify's modules are).
// * barrier_divergence: threads wait at barriers on different source lines.
// * simd_divergence: lanes of one simdgroup wait at different simd functions / lines, or some
//   at a simd function and some at a barrier. The simulator does not model the active mask
//   of lane-divergent branches: a simd function inside `if (lane < 16)` is reported too.
// * poison_in_collective: never reported as an issue; see DispatchResult::poison_flows. A simd
//   function that receives a float/half/bfloat value whose bits are a threadgroup poison pattern
//   computes on, and gives the poison to exactly the lanes whose results depend on it.
// * Poison that decides something (DispatchResult::poison_uses, not issues either): in a kernel
//   compiled with the instrumentation of mtlsim/poison_hooks.h, a comparison with a poison operand
//   (a branch, select or bool it decides) and a poison float converted to an integer (an index).
// * deadlock: no fiber can run but not all have returned.
// * threadgroup_memory_limit: a threadgroup variable would bring threadgroup arrays plus the
//   variables reached so far past Metal's 32 KiB.
// Only the first DispatchOptions::max_issues are kept (issues_total counts all).
//
// Exact race detection (DispatchOptions::detect_races): see "Data races" below.
//
// Limits: at most 1024 threads per threadgroup; an exception escaping a kernel terminates the
// process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "mtlsim/thread_context.h"

namespace mtlsim {

using KernelThreadFn = void (*)(const ThreadContext&, void* user);
namespace detail {
struct LoopRun;
}
// A kernel's loop form (mtlsim/msl_loops.h): runs one whole threadgroup, its barrier-free regions
// as loops over the threads in lane order.
using KernelGroupFn = void (*)(const detail::LoopRun&, void* user);

// Which form of a kernel runs: its loop form when the launcher has one (automatic), or always one
// thread per fiber. Exact race detection always runs on fibers.
enum class ExecPath { automatic, fibers };

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
  std::string name = {};        // for race reports
  size_t element_size = 1;      // race detection granule, see TrackedBuffer
};

// Device memory the race detector watches (DispatchOptions::race_buffers).
struct TrackedBuffer {
  std::string name = {};
  const void* data = nullptr;
  size_t bytes = 0;
  // Accesses to any byte of one element count as accesses to that element: two threads writing
  // different bytes of one element are reported. Use the element type's size (1 for bytes).
  size_t element_size = 1;
};

struct DispatchOptions {
  Dim3 threadgroups;  // threadgroups per grid
  Dim3 threads_per_threadgroup;
  std::vector<ThreadgroupArraySpec> threadgroup_arrays;
  LaneOrder order = LaneOrder::forward;
  uint64_t seed = 0;  // for LaneOrder::shuffled
  int workers = 0;    // 0: all cores
  std::string kernel_name;  // for reports
  // The kernel's function as `__func__` names it (no namespace, no template arguments): a
  // `return` executed in it is named in barrier_early_exit reports (kernel_source_begin.h).
  std::string kernel_function;
  size_t max_issues = 20;   // also the number of distinct DataRaces kept
  // Exact race detection: needs the kernel compiled with g++ -fsanitize=thread (not linked with
  // libtsan; this runtime provides the __tsan_* entry points). Runs on one worker whatever
  // `workers` says. Watches race_buffers, every threadgroup array and every threadgroup variable.
  bool detect_races = false;
  std::vector<TrackedBuffer> race_buffers;
  // With detect_races: hand back the last write to every element of race_buffers
  // (DispatchResult::last_writes), so that a wrong output can name the line that wrote it.
  bool keep_last_writes = false;
  // Report two unordered plain stores of the same value to one element too. Off: such a pair is
  // benign, as in practice on GPUs (and in Oclgrind); a store of another value still races.
  bool report_same_value_stores = false;
  // Fill threadgroup variables declared in kernel bodies with zeros instead of poison: their
  // counterpart of ThreadgroupArraySpec::poison = {0} (verify's "zeroed threadgroup memory" run).
  bool zero_threadgroup_variables = false;
  // Run only these threadgroups (linear indices x + y*X + z*X*Y, each below threadgroups.volume());
  // empty: all. verify's quick mode, for grids too large to simulate whole.
  std::vector<uint64_t> only_threadgroups;
  // The kernel's loop form, if the front end made one: each threadgroup runs as one call of it
  // instead of one fiber per thread (except with detect_races, or exec == ExecPath::fibers).
  KernelGroupFn group_fn = nullptr;
  ExecPath exec = ExecPath::automatic;
};

struct SimIssue {
  enum class Kind {
    barrier_early_exit,
    barrier_divergence,
    simd_divergence,
    deadlock,
    poison_in_collective,
    threadgroup_memory_limit,
    // An array whose size its type gives (a private array; a threadgroup array declared in the
    // body) indexed outside it, reported at the access (-fsanitize=bounds); the threadgroup stops.
    array_out_of_bounds,
  };
  Kind kind;
  std::string message;  // complete: names kernel, line, threadgroup, threads, and a fix
  // Field names avoid `thread` / `threadgroup`, which the shim defines as macros.
  int line = 0;                  // kernel source line of the barrier / collective
  Dim3 threadgroup_position;     // the threadgroup it happened in
  uint32_t thread_index = 0;     // first offending thread (linear index in the threadgroup)
  uint32_t receivers = 0;        // poison_flows: lanes whose results were computed from the poison
};
const char* to_string(SimIssue::Kind kind) noexcept;

// A poison value (never-written threadgroup memory, directly or through a simd function) that
// decided something in a kernel thread; one per kind and instruction, with its first occurrence.
// Seen only in kernels compiled with the instrumentation of mtlsim/poison_hooks.h.
struct PoisonUse {
  enum class Kind {
    branch,  // an operand of a comparison (or switch): it decides a branch, a select or a bool
    index,   // a float converted to an integer: an index or address takes whatever it held
    // A value of an uninitialised private variable (the 0xFE bytes of -ftrivial-auto-var-init=
    // pattern, as a float or a 32/64-bit integer) compared or converted to an integer.
    private_read,
  };
  Kind kind = Kind::branch;
  uintptr_t pc = 0;  // in the kernel's code (its line: from the module's line table)
  Dim3 threadgroup_position;
  uint32_t thread_index = 0;   // linear index in the threadgroup
  uint32_t bits = 0;           // the poison seen: f32 bits, or f16 / bf16 bits
  uint32_t integer_bits = 0;   // index: the integer type converted to
  bool integer_signed = false;
  uint64_t occurrences = 1;    // in the dispatch, by any thread
};
const char* to_string(PoisonUse::Kind kind) noexcept;  // "poison_in_branch", "poison_in_index", ...
// A complete report; `where` follows the sentence's subject and names the line (" at line 30",
// or a marker a caller resolves to one).
std::string describe(const PoisonUse& use, const std::string& kernel_name, const std::string& where);

// ---- Data races ----
// With detect_races, every access to tracked memory is checked against Metal's happens-before
// order. Access a happens before a later access b when
//   * both are by the same thread; or
//   * both are in one threadgroup and a threadgroup_barrier whose mem_flags cover the memory
//     (mem_device for buffers, mem_threadgroup for threadgroup arrays and variables) completed
//     between them; or
//   * both are in one simdgroup and a simdgroup_barrier with such flags completed between them.
// Threadgroups are never ordered with each other; simd-group functions order nothing; relaxed
// atomics never race with atomics but order nothing either. Two accesses to one element race
// when at least one writes, they are not both atomic, and neither happens before the other.
// A race is found on every element that has one; each pair of source locations (pcs) on one
// buffer or array is reported once, with how often it occurred.
struct RaceAccess {
  bool write = false;
  bool atomic = false;
  Dim3 threadgroup_position;
  uint32_t thread_index = 0;  // linear index in the threadgroup
  uintptr_t pc = 0;         // return address of the instrumentation call in the kernel's code
  uintptr_t call_site = 0;  // where the (not inlined) function holding pc was called; 0: unknown
  // Filled by resolve_race_sources() from the kernel's debug line table: the innermost .metal
  // line of the access, and the body line that called the helper holding it (when it is in a
  // helper). 0: unknown.
  int line = 0;
  int caller_line = 0;
};

struct DataRace {
  std::string memory;              // buffer, threadgroup array or threadgroup variable name
  bool threadgroup_memory = false;
  bool threadgroup_variable = false;  // threadgroup memory declared in the kernel body
  uint64_t element = 0;            // index of the first racing element (element_size units)
  RaceAccess earlier, later;       // in simulated execution order
  // Same threadgroup only: a barrier ran between the two accesses, but not one whose mem_flags
  // cover this memory (e.g. mem_none, or mem_device for a threadgroup array).
  bool barrier_without_flags = false;
  uint64_t occurrences = 1;        // racing access pairs with the same two pcs on this memory
  // Source lines of the threadgroup barriers that ordered this memory in the dispatch: a race
  // between two lines with such a barrier between them is one across loop iterations.
  std::vector<int> barrier_lines = {};
  // Nonzero: `earlier` is a read whose thread took part in a simd function after it (so its value
  // was consumed) before threadgroup_barrier at this line, whose mem_flags leave this memory out,
  // and `later` a write after that barrier. The barrier orders their execution, not their memory:
  // a warning under Metal's memory model (describe() says so), not a race that changes results.
  int execution_barrier_line = 0;
  bool memory_model_only() const { return execution_barrier_line != 0; }
  bool same_threadgroup() const { return earlier.threadgroup_position == later.threadgroup_position; }
};

// Fills RaceAccess::line / caller_line with `addr2line` on the object that holds each pc (the
// kernel must be compiled with -g1 or more; lines stay 0 where that fails), then merges races
// on the same memory between the same two lines (one line can compile to several pcs).
void resolve_race_sources(std::vector<DataRace>& races);
// How resolve_race_sources() runs `addr2line -i -a -f -e <object> <offsets...>`: returns its
// stdout. Default (nullptr): popen. A process that may not start programs (verify's sandboxed
// case child) installs one that asks a helper outside its sandbox.
using Addr2lineFn = std::string (*)(const std::string& object, const std::vector<uintptr_t>& offsets);
void set_addr2line(Addr2lineFn run);
// The same for single accesses (RaceAccess::line / caller_line; nothing is merged).
void resolve_access_sources(std::vector<RaceAccess>& accesses);
// "last written at line 39 by thread 0 of threadgroup (0,0,0)" for a resolved last write, or
// "never written by the kernel" (pc 0).
std::string describe_last_write(const RaceAccess& write);
// A complete report: kernel, memory, element, both accesses (kind, line, thread, threadgroup),
// and which barrier to add. Lines appear as "line N".
std::string describe(const DataRace& race, const std::string& kernel_name);

struct DispatchResult {
  std::vector<SimIssue> issues;
  uint64_t issues_total = 0;  // including those beyond max_issues
  // Poison (never-written threadgroup memory) that reached a simd function, one per source line,
  // kind poison_in_collective. Not an issue: the run goes on, the lanes whose results depend on
  // it get poison results, and whether that matters shows in what the kernel then produces (a
  // caller reports these where an output depends on uninitialised memory).
  std::vector<SimIssue> poison_flows;
  // Poison that decided a comparison or became an integer (instrumented kernels only): a finding
  // in itself, whatever the outputs say. At most max_issues, in order of first occurrence.
  std::vector<PoisonUse> poison_uses;
  // keep_last_writes only: per race_buffers entry, the last write to each element (pc 0: none).
  // Lines are filled by resolve_access_sources().
  std::vector<std::vector<RaceAccess>> last_writes;
  std::vector<DataRace> races;  // detect_races only: the first max_issues distinct races
  uint64_t races_total = 0;     // distinct (pc pair, memory) races, including those not kept
  uint64_t fiber_switches = 0;
  uint64_t threadgroups_run = 0;
  uint64_t threadgroups_as_loops = 0;  // of threadgroups_run: those run by the loop form
  bool ok() const { return issues_total == 0; }  // races are not counted here
};

// For a crash handler on a worker thread: "element 100000 of threadgroup array `t`, which holds 256
// elements" when `address` lies in the running threadgroup's memory or the 16 MiB guards around
// it (an index far past or before a threadgroup array or variable: the one starting nearest below
// the address, or the first); false otherwise. Async-signal-safe.
bool describe_threadgroup_address(uintptr_t address, char* out, size_t size) noexcept;

// For a signal handler on a worker thread: the highest address (exclusive) of the stack of the
// simulated thread running there, 0 when none runs. Async-signal-safe.
uintptr_t current_stack_top() noexcept;

// Runs fn(ctx, user) for every thread of the grid. Throws std::invalid_argument for an
// empty grid, more than 1024 threads per threadgroup, or more than 64 KiB of threadgroup
// memory in threadgroup_arrays (threadgroup variables beyond Metal's 32 KiB are reported as
// threadgroup_memory_limit instead). Concurrent calls are serialised; a kernel must not call
// dispatch() itself.
DispatchResult dispatch(const DispatchOptions& options, KernelThreadFn fn, void* user);

}  // namespace mtlsim
