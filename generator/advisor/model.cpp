#include "advisor/model.h"

#include <algorithm>

namespace mtlgen::advisor {

uint64_t threadgroups_per_core(uint64_t threads_per_threadgroup, uint64_t threadgroup_memory_bytes) {
  uint64_t groups = std::min(kThreadsPerCore / std::max<uint64_t>(threads_per_threadgroup, 1), kThreadgroupsPerCore);
  if (threadgroup_memory_bytes > kSingleThreadgroupMemory) groups = 1;
  else if (threadgroup_memory_bytes > kHalvingThreadgroupMemory) groups /= 2;
  return std::max<uint64_t>(1, groups);
}

// time = launch + max(compute, floor * parallelism * coalescing), where parallelism is how many
// times the peak exceeds what the resident threads can stream (1 once they saturate it).
Prediction predict(const Workload& w, const Chip& chip) {
  Prediction p;
  const double bytes = double(w.unique_bytes);
  p.floor_us = bytes / (chip.bandwidth_gbs * 1e3);
  p.compute_us = double(w.flops) / (chip.peak_gflops() * 1e3);
  p.threadgroups_per_core = threadgroups_per_core(w.threads_per_threadgroup, w.threadgroup_memory_bytes);
  const uint64_t resident_groups = std::min<uint64_t>(w.threadgroups, uint64_t(chip.gpu_cores) * p.threadgroups_per_core);
  p.resident_threads = std::max<uint64_t>(1, resident_groups * w.threads_per_threadgroup);
  const double streamed_gbs = double(p.resident_threads) * kThreadBytesPerSecond / 1e9;
  p.parallelism = std::max(1.0, chip.bandwidth_gbs / streamed_gbs);
  p.coalescing = std::max(1.0, w.coalescing);
  p.time_us = kLaunchMicroseconds + std::max(p.compute_us, p.floor_us * p.parallelism * p.coalescing);
  p.bandwidth_gbs = bytes / (p.time_us * 1e3);
  p.gflops = double(w.flops) / (p.time_us * 1e3);
  return p;
}

}  // namespace mtlgen::advisor
