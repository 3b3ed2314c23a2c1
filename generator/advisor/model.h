#pragma once
// The advisor's time model (docs/report.md "The model"): a kernel moves its unique bytes no
// faster than the chip's peak bandwidth (the floor), slower when too few threads are resident to
// keep that bandwidth busy (the parallelism factor), and slower again when a simdgroup's access
// touches more 32-byte segments than the bytes it uses need (the coalescing factor).
#include <cstdint>

#include "advisor/chips.h"

namespace mtlgen::advisor {

// Assumptions of the model, each documented in docs/report.md.
inline constexpr double kLaunchMicroseconds = 0.9;        // per dispatch (DESIGN.md)
inline constexpr uint64_t kThreadsPerCore = 1024;         // resident threads per GPU core
inline constexpr uint64_t kThreadgroupsPerCore = 8;       // resident threadgroups per core
// The profiling guide's occupancy rule: threadgroup memory above 8 KiB halves the threadgroups a
// core holds at once; above 16 KiB one threadgroup runs per core.
inline constexpr uint64_t kHalvingThreadgroupMemory = 8 * 1024;
inline constexpr uint64_t kSingleThreadgroupMemory = 16 * 1024;
// Bytes one thread streams per second when it alone waits on memory: fitted to the argmax over
// 151,936 floats on an M3 Max (1,713 us with 32 threads, 45 us with 1,024: 11.1 and 13.2 MB/s).
inline constexpr double kThreadBytesPerSecond = 12e6;

// One dispatch as the model sees it.
struct Workload {
  uint64_t unique_bytes = 0;  // bytes read once plus bytes written once
  uint64_t flops = 0;
  uint64_t threadgroups = 1;
  uint64_t threads_per_threadgroup = 1;
  uint64_t threadgroup_memory_bytes = 0;
  double coalescing = 1;  // bytes the memory system moves per byte used, >= 1
};

struct Prediction {
  double floor_us = 0;      // unique bytes at peak bandwidth
  double compute_us = 0;    // flops at the FP32 roof
  uint64_t threadgroups_per_core = 0;  // resident at once (threads and threadgroup memory allow)
  uint64_t resident_threads = 0;
  double parallelism = 1;   // >= 1: how far too few resident threads stretch the floor
  double coalescing = 1;
  double time_us = 0;       // the prediction
  double bandwidth_gbs = 0;  // unique bytes / time
  double gflops = 0;         // flops / time
};

// Threadgroups one core holds at once: kThreadgroupsPerCore, fewer where their threads exceed
// kThreadsPerCore, then the threadgroup-memory rule; at least 1 (a threadgroup that fits
// Metal's limits always runs).
uint64_t threadgroups_per_core(uint64_t threads_per_threadgroup, uint64_t threadgroup_memory_bytes);

Prediction predict(const Workload& w, const Chip& chip);

}  // namespace mtlgen::advisor
