// The cost of the advisor's counters (`mtlgen report`) on rms_norm 64 x 2048, TG 512, one worker:
// per iteration a plain dispatch, one of the access-counted build with nothing watched (what an
// instrumented module costs when the counters are off: each hook returns at its first check) and
// one with every buffer watched and sites recorded (the counted run). Counters
// `counted_off_over_sim` and `counters_over_sim` are the medians' ratios to the plain dispatch.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <random>
#include <vector>

#include "bench_support.h"
#include "mtlsim/access_counter.h"
#include "mtlsim/runtime.h"
#include "rms_norm_launch.h"
// clang-format off
#include <kernels/rms_norm.metal>  // simulator copy (see mtlsim_prepare_msl)
// clang-format on

namespace sim_bench {
void launch_rms_norm_counted(const mtlsim::ThreadContext& tc, void* user);  // rms_norm_counted.cpp
}

namespace {

using namespace sim_bench;

void launch_plain(const mtlsim::ThreadContext& tc, void* user) {
  auto& a = *static_cast<RmsArgs*>(user);
  rms_norm<float, kRmsTg>(a.x, a.w, a.y, a.n, a.eps, static_cast<float*>(tc.threadgroup_memory[0]),
                          tc.threadgroup_position_in_grid.x, tc.thread_position_in_threadgroup.x,
                          tc.thread_index_in_simdgroup, tc.simdgroup_index_in_threadgroup);
}

double seconds(const std::function<void()>& run) {
  const auto start = std::chrono::steady_clock::now();
  run();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void BM_RmsNormCounters(benchmark::State& state) {
  const std::vector<float> x = normal_floats(kRows * kCols, 1), w = normal_floats(kCols, 2);
  std::vector<float> y(x.size());
  RmsArgs args{x.data(), w.data(), y.data(), kCols, kEps};
  mtlsim::DispatchOptions o;
  o.threadgroups = {kRows, 1, 1};
  o.threads_per_threadgroup = {kRmsTg, 1, 1};
  o.threadgroup_arrays = {{kRmsTg / 32 * sizeof(float), {}, "partial", sizeof(float)}};
  o.workers = 1;
  std::vector<double> plain_s, off_s, on_s;
  for (auto _ : state) {
    plain_s.push_back(seconds([&] { mtlsim::dispatch(o, launch_plain, &args); }));
    off_s.push_back(seconds([&] { mtlsim::dispatch(o, launch_rms_norm_counted, &args); }));
    on_s.push_back(seconds([&] {
      for (const void* p : {(const void*)x.data(), (const void*)y.data()}) mtlsim::watch_accesses(p, x.size() * sizeof(float));
      mtlsim::watch_accesses(w.data(), w.size() * sizeof(float));
      mtlsim::count_sites(2);
      mtlsim::dispatch(o, launch_rms_norm_counted, &args);
      const mtlsim::SiteReport report = mtlsim::take_site_report();
      for (const void* p : {(const void*)x.data(), (const void*)y.data(), (const void*)w.data()}) mtlsim::take_access_counts(p);
      if (report.sites.empty()) state.SkipWithError("the counted build recorded no access site");
    }));
    state.SetIterationTime(on_s.back());
  }
  const double plain = median(plain_s);
  state.counters["counted_off_over_sim"] = median(off_s) / plain;
  state.counters["counters_over_sim"] = median(on_s) / plain;
}
BENCHMARK(BM_RmsNormCounters)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace
