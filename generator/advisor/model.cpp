#include "advisor/model.h"

#include <algorithm>
#include <cmath>

namespace mtlgen::advisor {

uint64_t threadgroups_per_core(uint64_t threads_per_threadgroup, uint64_t threadgroup_memory_bytes) {
  uint64_t groups = kThreadsPerCore / std::max<uint64_t>(threads_per_threadgroup, 1);
  if (threadgroup_memory_bytes) groups = std::min(groups, kThreadgroupMemoryPerCore / threadgroup_memory_bytes);
  return std::max<uint64_t>(1, groups);
}

namespace {

// Each busy core runs its share of the grid in batches of the threadgroups it holds at once; a
// thread of a batch waits one round trip per bytes_in_flight it loads and per synchronisation.
double latency_chain_us(const Workload& w, const Chip& chip, uint64_t busiest_core_groups, uint64_t per_core) {
  const double threads = double(w.threadgroups) * double(std::max<uint64_t>(w.threads_per_threadgroup, 1));
  const double per_thread = double(w.unique_bytes) / threads;
  const double round_trips = std::ceil(per_thread / std::max(w.bytes_in_flight, 1.0)) + double(w.sync_phases);
  const double batches = std::ceil(double(busiest_core_groups) / double(per_core));
  return batches * round_trips * chip.latency_us();
}

}  // namespace

Prediction predict(const Workload& w, const Chip& chip) {
  Prediction p;
  const double bytes = double(w.unique_bytes);
  const uint64_t groups = std::max<uint64_t>(w.threadgroups, 1);
  const uint64_t busy_cores = std::min<uint64_t>(groups, uint64_t(chip.gpu_cores));
  const uint64_t busiest = (groups + busy_cores - 1) / busy_cores;
  p.launch_us = chip.launch_us();
  p.floor_us = bytes / (chip.bandwidth_gbs * 1e3);
  p.compute_us = double(w.flops) / (chip.peak_gflops() * 1e3);
  p.threadgroups_per_core = threadgroups_per_core(w.threads_per_threadgroup, w.threadgroup_memory_bytes);
  p.resident_threads = std::min(groups, busy_cores * p.threadgroups_per_core) * w.threads_per_threadgroup;
  p.imbalance = double(busiest) / (double(groups) / double(busy_cores));
  p.coalescing = std::max(1.0, w.coalescing);
  const double core_gbs = kCoreBytesPerCycle * chip.clock_ghz;
  p.dram_us = bytes * p.coalescing / (std::min(chip.bandwidth_gbs, double(busy_cores) * core_gbs) * 1e3);
  const double loaded = double(std::max(w.loaded_bytes, w.unique_bytes));
  p.load_us = loaded / (double(busy_cores) * core_gbs * 1e3) * p.imbalance;
  p.latency_us = latency_chain_us(w, chip, busiest, p.threadgroups_per_core);
  const double memory_us = std::max({p.dram_us, p.load_us, p.latency_us});
  p.parallelism = p.floor_us > 0 ? std::max(1.0, memory_us / (p.floor_us * p.coalescing)) : 1;
  p.time_us = p.launch_us + std::max(p.compute_us, memory_us);
  p.bandwidth_gbs = bytes / (p.time_us * 1e3);
  p.gflops = double(w.flops) / (p.time_us * 1e3);
  return p;
}

}  // namespace mtlgen::advisor
