// Counts the loads and stores that instrumented code makes into watched memory: how often a
// kernel reads each byte of a buffer (tests/sim/load_count_test.cpp proves with it that the
// shipped rms_norm and softmax read each input element once), and, for the performance advisor
// (`mtlgen report`), per access site (instruction) the bytes it moved and how many 32/64/128-byte
// segments one simdgroup's execution of it touches (coalescing), plus the active lanes of every
// simd function and the barriers passed (mtlsim/counter_hooks.h).
//
// A TU is instrumented when g++ compiles it with
//   -fsanitize=kernel-address --param asan-instrumentation-with-call-threshold=0
//   --param asan-stack=0 --param asan-globals=0 -include mtlsim/access_hooks.h
// g++ then calls a hook before every load and store the optimised code still makes, with its
// address and size (vector loads included); the hooks (access_hooks.h) hand them, with the
// calling instruction, to mtlsim_count_access. Kernel-address mode needs no sanitizer runtime
// and no shadow memory. Only instrumented TUs count: the runtime itself, and code that fills or
// checks buffers in another TU, do not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

extern "C" void mtlsim_count_access(uintptr_t address, size_t size, bool store, uintptr_t pc);
extern "C" void mtlsim_count_barrier(int line);
extern "C" void mtlsim_count_simd(uint8_t op, int line, uint32_t active_lanes);

namespace mtlsim {

// Per byte of a watched range: how many loads and stores covered it.
struct AccessCounts {
  std::vector<uint32_t> loads, stores;
};

// Starts counting accesses to [base, base + bytes) from zero. Call between dispatches: the
// set of watched ranges is not guarded against hooks running at the same time.
void watch_accesses(const void* base, size_t bytes);

// The counts of the watched range that starts at `base` (empty when none does); stops watching it.
AccessCounts take_access_counts(const void* base);

// ---- per access site (the advisor's counters) ----

// One instruction of the kernel that loads or stores watched memory.
struct SiteCounts {
  uintptr_t pc = 0;             // the instruction (return address of its hook call)
  const void* range = nullptr;  // base of the watched range it touched (its first, if several)
  bool store = false;
  uint64_t accesses = 0, bytes = 0;  // every thread of every threadgroup
  // Over the sampled threadgroups: one "simdgroup access" is window k of the accesses the lanes of
  // one simdgroup make to one watched range, a window being 4 consecutive accesses of each lane
  // (lanes run one after another, so lane l's window k pairs with lane m's; a thread's N_READS
  // consecutive loads fall in one window, as caches merge them); it counts for the site that
  // opened it. Sums over those accesses of the lanes taking part, the distinct bytes touched and
  // the distinct aligned 32/64/128-byte segments touched, and the fewest 32-byte segments that
  // could hold the distinct bytes (what a perfectly coalesced access of them would touch).
  uint64_t simd_accesses = 0, lanes = 0, distinct_bytes = 0, segments32 = 0, segments64 = 0, segments128 = 0;
  uint64_t ideal_segments32 = 0;
  uint64_t sampled_bytes = 0;  // bytes the sampled threadgroups' lanes requested here
};

// A simd function (or simdgroup_barrier) at one source line: how often a simdgroup completed it
// and the active lanes summed over those completions.
struct SimdCounts {
  uint8_t op = 0;  // mtlsim::detail::Op
  int line = 0;
  uint64_t calls = 0, active_lanes = 0;
};

struct SiteReport {
  std::vector<SiteCounts> sites;  // in order of first execution
  std::vector<SimdCounts> simd;   // by line, then op
  uint64_t barriers = 0;          // threadgroup_barrier calls summed over threads
};

// Starts recording access sites, simd functions and barriers (cleared first); threadgroups whose
// linear index is below `sampled_threadgroups` also record simdgroup accesses (their memory grows
// with the accesses made, hence the sample). Call between dispatches.
void count_sites(uint64_t sampled_threadgroups);
// What was recorded since count_sites(); stops recording.
SiteReport take_site_report();

}  // namespace mtlsim
