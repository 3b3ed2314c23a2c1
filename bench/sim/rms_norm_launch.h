// The benchmark's rms_norm launch (64 x 2048, threadgroup 512), shared by sim_bench.cpp and the
// race-instrumented copy of the kernel (rms_norm_races.cpp).
#pragma once

#include "mtlsim/runtime.h"

namespace sim_bench {

constexpr unsigned kRows = 64, kCols = 2048, kRmsTg = 512;
constexpr float kEps = 1e-6f;

struct RmsArgs {
  const float *x, *w;
  float* y;
  unsigned n;
  float eps;
};

// The same launcher for rms_norm compiled with -fsanitize=thread (calls the runtime's race hooks).
__attribute__((visibility("default"))) void launch_rms_norm_races(const mtlsim::ThreadContext& tc, void* user);

}  // namespace sim_bench
