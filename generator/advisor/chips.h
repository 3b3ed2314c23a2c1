#pragma once
// The Apple GPUs the advisor predicts for: peak DRAM bandwidth (DESIGN.md "Facts for kernels"),
// GPU cores of the largest configuration and the GPU clock, from which the FP32 roof follows
// (128 FP32 lanes per core, a fused multiply-add counting two flops), and the two latency terms
// of the model (docs/report.md "The model"): the launch of one dispatch and one memory round trip.
#include <string>
#include <vector>

namespace mtlgen::advisor {

// Fitted to the seed measurements on an M3 Max (docs/report.md "Calibration"); estimates, no
// public measurement of either exists for Apple GPUs.
inline constexpr double kM3MaxLaunchMicroseconds = 1.5;   // softmax 16 x 128 and rms_norm TG 512
inline constexpr double kM3MaxLatencyMicroseconds = 0.36;  // argmax with one simdgroup: 4,748 loads per lane
inline constexpr double kM3MaxClockGhz = 1.38;

struct Chip {
  std::string name;
  double bandwidth_gbs = 0;  // peak DRAM bandwidth, GB/s (1e9 bytes)
  int gpu_cores = 0;
  double clock_ghz = 0;
  double peak_gflops() const { return gpu_cores * 128 * 2 * clock_ghz; }
  // Estimates: the M3 Max's fitted values scaled by the GPU clock (both are paid mostly in the
  // GPU's clock domain: the command processor's dispatch, the core's load path and caches).
  double launch_us() const { return kM3MaxLaunchMicroseconds * kM3MaxClockGhz / clock_ghz; }
  double latency_us() const { return kM3MaxLatencyMicroseconds * kM3MaxClockGhz / clock_ghz; }
};

// M1, M2, M3, M3 Max, M4, M4 Pro, M4 Max, in that order.
const std::vector<Chip>& chips();
// The chip of that name; throws std::invalid_argument naming the known ones.
const Chip& chip_named(const std::string& name);

}  // namespace mtlgen::advisor
