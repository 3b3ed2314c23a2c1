#pragma once
// The advisor's time model (docs/report.md "The model"). A dispatch costs its launch plus the
// largest of four terms: the flops at the FP32 roof; the unique bytes at the DRAM bandwidth the
// busy cores can draw (times the coalescing factor); the bytes the loads move, re-reads from
// cache included, through the busy cores' load paths; and the latency chain of the busiest core,
// whose threads each wait one memory round trip per `bytes_in_flight` they load and per
// threadgroup-wide synchronisation. Many threadgroups are resident on a core at once (Apple GPUs
// hold up to 3,072 threads per core), so a small threadgroup costs nothing while the grid fills
// the machine; it costs the latency chain when the grid cannot.
#include <algorithm>
#include <cstdint>

#include "advisor/chips.h"

namespace mtlgen::advisor {

// Assumptions of the model, each documented in docs/report.md.
// Resident threads per core: philipturner/metal-benchmarks gives 768-3,072 by register use
// (Apple 7 and 8); the model takes 2,048 (an estimate for kernels of modest register use).
inline constexpr uint64_t kThreadsPerCore = 2048;
// Threadgroup memory per core, shared by the threadgroups resident on it (metal-benchmarks: 64 KB).
inline constexpr uint64_t kThreadgroupMemoryPerCore = 64 * 1024;
// Bytes one core's loads move per GPU cycle, cache hits included: fitted to the nvfp4 matvec
// seeds with one row per simdgroup, whose x is re-read by every simdgroup (an estimate; the
// core's bus to memory is 32 bytes per cycle, metal-benchmarks, and L1 hits add to it).
inline constexpr double kCoreBytesPerCycle = 40;
// Bytes a thread has in flight per round trip without counters: one 4-byte load at a time, as a
// strided loop that folds each element into a running reduction issues them.
inline constexpr double kScalarBytesInFlight = 4;

// One dispatch as the model sees it.
struct Workload {
  uint64_t unique_bytes = 0;  // bytes read once plus bytes written once
  uint64_t loaded_bytes = 0;  // bytes the loads and stores move, re-reads included (0: unique_bytes)
  uint64_t flops = 0;
  uint64_t threadgroups = 1;
  uint64_t threads_per_threadgroup = 1;
  uint64_t threadgroup_memory_bytes = 0;
  double coalescing = 1;  // bytes the memory system moves per byte used, >= 1
  double bytes_in_flight = kScalarBytesInFlight;  // per thread per memory round trip
  uint64_t sync_phases = 0;  // threadgroup-wide synchronisations (barriers, tg_* reductions) per thread
};

struct Prediction {
  double launch_us = 0;
  double floor_us = 0;      // unique bytes at peak bandwidth
  double compute_us = 0;    // flops at the FP32 roof
  double dram_us = 0;       // unique bytes x coalescing at the bandwidth the busy cores draw
  double load_us = 0;       // loaded bytes through the busy cores' load paths
  double latency_us = 0;    // the busiest core's chain of round trips
  uint64_t threadgroups_per_core = 0;  // resident at once (threads and threadgroup memory allow)
  uint64_t resident_threads = 0;       // over the whole chip, at most the grid
  double imbalance = 1;     // threadgroups of the busiest core over the mean of the busy cores
  double parallelism = 1;   // >= 1: the memory time over floor x coalescing (occupancy's cost)
  double coalescing = 1;
  double time_us = 0;       // the prediction
  double bandwidth_gbs = 0;  // unique bytes / time
  double gflops = 0;         // flops / time
  bool latency_bound() const { return latency_us > std::max(dram_us, load_us); }
};

// Threadgroups one core holds at once: as many as kThreadsPerCore threads and
// kThreadgroupMemoryPerCore bytes allow; at least 1 (a threadgroup within Metal's limits runs).
uint64_t threadgroups_per_core(uint64_t threads_per_threadgroup, uint64_t threadgroup_memory_bytes);

Prediction predict(const Workload& w, const Chip& chip);

}  // namespace mtlgen::advisor
