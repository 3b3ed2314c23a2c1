// Counts the loads and stores that instrumented code makes into watched memory: how often a
// kernel reads each byte of a buffer (tests/sim/load_count_test.cpp proves with it that the
// shipped rms_norm and softmax read each input element once), and the seed of per-buffer
// traffic reports (bytes read and written, re-reads).
//
// A TU is instrumented when g++ compiles it with
//   -fsanitize=kernel-address --param asan-instrumentation-with-call-threshold=0
//   --param asan-stack=0 --param asan-globals=0 -include mtlsim/access_hooks.h
// g++ then calls a hook before every load and store the optimised code still makes, with its
// address and size (vector loads included); the hooks (access_hooks.h) hand them to
// mtlsim_count_access. Kernel-address mode needs no sanitizer runtime and no shadow memory.
// Only instrumented TUs count: the runtime itself, and code that fills or checks buffers in
// another TU, do not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

extern "C" void mtlsim_count_access(uintptr_t address, size_t size, bool store);

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

}  // namespace mtlsim
