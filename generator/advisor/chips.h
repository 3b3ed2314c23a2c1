#pragma once
// The Apple GPUs the advisor predicts for: peak DRAM bandwidth (DESIGN.md "Facts for kernels"),
// GPU cores of the largest configuration and the GPU clock, from which the FP32 roof follows
// (128 FP32 lanes per core, a fused multiply-add counting two flops).
#include <string>
#include <vector>

namespace mtlgen::advisor {

struct Chip {
  std::string name;
  double bandwidth_gbs = 0;  // peak DRAM bandwidth, GB/s (1e9 bytes)
  int gpu_cores = 0;
  double clock_ghz = 0;
  double peak_gflops() const { return gpu_cores * 128 * 2 * clock_ghz; }
};

// M1, M2, M3, M3 Max, M4, M4 Pro, M4 Max, in that order.
const std::vector<Chip>& chips();
// The chip of that name; throws std::invalid_argument naming the known ones.
const Chip& chip_named(const std::string& name);

}  // namespace mtlgen::advisor
