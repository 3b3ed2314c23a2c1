// Simulator cost: fiber switch rate, and two real kernels (rms_norm 64x2048 TG512, argmax
// 1x151936 TG1024) simulated on 1 and 2 workers vs a serial C++ loop. The counter
// `sim_over_serial` is median(simulated) / median(serial) over the same iterations, each
// iteration timing one of each back to back, so machine load drifting during the run (this
// runs on shared machines) affects both sides alike. Reported time: the simulated dispatch.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "mtlsim/runtime.h"
// clang-format off
#include <kernels/rms_norm.metal>  // simulator copies (see mtlsim_prepare_msl)
#include <kernels/argmax.metal>
// clang-format on

namespace {

using Clock = std::chrono::steady_clock;

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& f : v) f = dist(rng);
  return v;
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// Each iteration times one simulated dispatch (the benchmark's manual time) and one serial
// run right after it, so both see the same machine load; the ratio is of the two medians.
template <class Sim, class Serial>
void run_against_serial(benchmark::State& state, Sim&& sim, Serial&& serial) {
  std::vector<double> sim_s, serial_s;
  uint64_t switches = 0;
  for (auto _ : state) {
    auto start = Clock::now();
    const mtlsim::DispatchResult r = sim();
    sim_s.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    state.SetIterationTime(sim_s.back());
    start = Clock::now();
    serial();
    serial_s.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    switches += r.fiber_switches;
    if (!r.ok()) state.SkipWithError(r.issues.front().message.c_str());
  }
  const double sim_med = median(sim_s), serial_med = median(serial_s);
  state.counters["serial_us"] = serial_med * 1e6;
  state.counters["sim_us"] = sim_med * 1e6;
  state.counters["sim_over_serial"] = sim_med / serial_med;
  state.counters["switches"] = double(switches) / double(state.iterations());
}

// ---- rms_norm 64 x 2048, threadgroup 512 ----
constexpr uint kRows = 64, kCols = 2048, kRmsTg = 512;
constexpr float kEps = 1e-6f;

struct RmsArgs {
  const float *x, *w;
  float* y;
  uint n;
  float eps;
};

void launch_rms_norm(const mtlsim::ThreadContext& tc, void* user) {
  auto& a = *static_cast<RmsArgs*>(user);
  rms_norm<float, kRmsTg>(a.x, a.w, a.y, a.n, a.eps, static_cast<float*>(tc.threadgroup_memory[0]),
                          tc.threadgroup_position_in_grid.x, tc.thread_position_in_threadgroup.x,
                          tc.thread_index_in_simdgroup, tc.simdgroup_index_in_threadgroup);
}

void serial_rms_norm(const float* x, const float* w, float* y, uint rows, uint n, float eps) {
  for (uint r = 0; r < rows; ++r) {
    const float* xr = x + size_t(r) * n;
    float acc = 0.0f;
    for (uint i = 0; i < n; ++i) acc += xr[i] * xr[i];
    const float inv = 1.0f / std::sqrt(acc / float(n) + eps);
    for (uint i = 0; i < n; ++i) y[size_t(r) * n + i] = xr[i] * inv * w[i];
  }
}

void BM_RmsNorm(benchmark::State& state) {
  const std::vector<float> x = random_floats(kRows * kCols, 1), w = random_floats(kCols, 2);
  std::vector<float> y(x.size()), y_ref(x.size());
  RmsArgs args{x.data(), w.data(), y.data(), kCols, kEps};
  mtlsim::DispatchOptions o;
  o.threadgroups = {kRows, 1, 1};
  o.threads_per_threadgroup = {kRmsTg, 1, 1};
  o.threadgroup_arrays = {{kRmsTg / 32 * sizeof(float), {}}};
  o.workers = int(state.range(0));
  o.kernel_name = "rms_norm_f32_tg512";
  run_against_serial(
      state, [&] { return mtlsim::dispatch(o, launch_rms_norm, &args); },
      [&] { serial_rms_norm(x.data(), w.data(), y_ref.data(), kRows, kCols, kEps); });
  for (size_t i = 0; i < y.size(); i += 97)
    if (std::fabs(y[i] - y_ref[i]) > 1e-4f * (1 + std::fabs(y_ref[i]))) state.SkipWithError("rms_norm mismatch");
}
BENCHMARK(BM_RmsNorm)->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMicrosecond);

// ---- argmax 1 x 151936, threadgroup 1024 ----
constexpr uint kVocab = 151936, kArgmaxTg = 1024;

struct ArgmaxArgs {
  const float* x;
  uint* out;
  uint n;
};

void launch_argmax(const mtlsim::ThreadContext& tc, void* user) {
  auto& a = *static_cast<ArgmaxArgs*>(user);
  argmax<kArgmaxTg>(a.x, a.out, a.n, static_cast<float*>(tc.threadgroup_memory[0]),
                    static_cast<uint*>(tc.threadgroup_memory[1]), tc.threadgroup_position_in_grid.x,
                    tc.thread_position_in_threadgroup.x, tc.thread_index_in_simdgroup,
                    tc.simdgroup_index_in_threadgroup);
}

uint serial_argmax(const float* x, uint n) {
  float best = -INFINITY;
  uint best_i = 0xFFFFFFFFu;
  for (uint i = 0; i < n; ++i)
    if (x[i] > best || (x[i] == best && best_i == 0xFFFFFFFFu)) best = x[i], best_i = i;
  return best_i == 0xFFFFFFFFu ? 0 : best_i;
}

void BM_Argmax(benchmark::State& state) {
  const std::vector<float> x = random_floats(kVocab, 3);
  uint out = 0, ref = 0;
  ArgmaxArgs args{x.data(), &out, kVocab};
  mtlsim::DispatchOptions o;
  o.threadgroups = {1, 1, 1};
  o.threads_per_threadgroup = {kArgmaxTg, 1, 1};
  o.threadgroup_arrays = {{kArgmaxTg / 32 * sizeof(float), {}}, {kArgmaxTg / 32 * sizeof(uint), {0}}};
  o.workers = int(state.range(0));
  o.kernel_name = "argmax_f32_tg1024";
  run_against_serial(
      state, [&] { return mtlsim::dispatch(o, launch_argmax, &args); },
      [&] { benchmark::DoNotOptimize(ref = serial_argmax(x.data(), kVocab)); });
  if (out != ref) state.SkipWithError("argmax mismatch");
}
BENCHMARK(BM_Argmax)->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMicrosecond);

// ---- raw fiber switch rate: 1024 threads x 64 barriers per threadgroup ----
void launch_barrier_loop(const mtlsim::ThreadContext&, void* user) { barrier_loop(*static_cast<uint*>(user)); }

void BM_FiberSwitch(benchmark::State& state) {
  uint rounds = 64;
  mtlsim::DispatchOptions o;
  o.threadgroups = {8, 1, 1};
  o.threads_per_threadgroup = {uint32_t(state.range(0)), 1, 1};
  o.workers = 1;
  o.kernel_name = "barrier_loop";
  uint64_t switches = 0;
  double seconds = 0;
  for (auto _ : state) {
    const auto start = Clock::now();
    const mtlsim::DispatchResult r = mtlsim::dispatch(o, launch_barrier_loop, &rounds);
    seconds += std::chrono::duration<double>(Clock::now() - start).count();
    switches += r.fiber_switches;
  }
  state.counters["switches_per_s"] = benchmark::Counter(double(switches), benchmark::Counter::kIsRate);
  state.counters["ns_per_switch"] = seconds * 1e9 / double(switches);
}
BENCHMARK(BM_FiberSwitch)->Arg(32)->Arg(256)->Arg(1024)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
