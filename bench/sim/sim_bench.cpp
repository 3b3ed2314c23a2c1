// Simulator cost: fiber switch rate, and two real kernels (rms_norm 64x2048 TG512, argmax
// 1x151936 TG1024) simulated on 1 and 2 workers vs a serial C++ loop. The counter
// `sim_over_serial` is median(simulated) / median(serial) over the same iterations, each
// iteration timing one of each back to back, so machine load drifting during the run (this
// runs on shared machines) affects both sides alike. Reported time: the simulated dispatch.
// The serial loop is timed on its second run of the iteration, so it finds its data in cache
// in every benchmark: timed once, after the simulated dispatch it read its inputs hot from it
// (the same arrays) and after PoCL's (in the helper process, on PoCL's copies) cold, and in one
// run the same serial rms_norm measured 10% slower beside PoCL than beside the simulator, which
// skewed the two ratios by as much.
// `sim_cpu_over_serial` is the same ratio of CPU times (the process's for the dispatch, the
// thread's for the serial loop): on a loaded machine wall time also counts the time slices other
// processes took from the longer side, CPU time does not. With one worker it compares like for
// like; with two it is total work, not speed. PoCL's `pocl_cpu_over_serial` likewise.
//
// BM_RmsNormExactRaces: the cost of `mtlgen verify --races exact` on rms_norm (one worker): per
// iteration a plain dispatch, one of the -fsanitize=thread build with the detector off (what the
// lane-order runs of that mode cost) and one with it on; counters `instrumented_over_sim` and
// `races_over_sim` are the medians' ratios to the plain dispatch.
//
// With OpenCL found at configure time (MTLGEN_SIM_BENCH_POCL), BM_PoclRmsNorm / BM_PoclArgmax
// run OpenCL C twins of the same kernels (kernels/*.cl, read at run time) on PoCL's CPU device,
// same shapes and data, with the counter `pocl_over_serial` taken the same way; the argument is
// the PoCL thread count (POCL_MAX_PTHREAD_COUNT / POCL_CPU_MAX_CU_NUM, one helper process per
// count, see below). Reported time: enqueue + clFinish.
//
// BM_RmsNorm / BM_Argmax take (workers, path): path 0 runs one fiber per thread, path 1 the loop
// form the MSL front end makes of the kernel (msl-loops/*_loops.inc, docs/simulator.md).
//
// Shipped kernels, one per family shape (issue 29), from the committed out/ files (shipped_*.cpp):
// BM_Q4_0Matvec (4,096 x 4,096, f32 TG 64 RPS 4), BM_SdpaVector (8 heads x 1,024 keys x head dim
// 128, bf16 cache, TG 1024) and BM_RglruScanBackward (its checkpoints and segments dispatches,
// 1 x 1,024 steps x 1,024 lanes, segments of 32), same arguments and counters, each checked against
// its serial twin after the timed loop (path 1 of a kernel without a loop form is skipped).
// BM_PoclQ4_0Matvec / BM_PoclSdpaVector run OpenCL twins of the first two (kernels/*.cl).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <random>
#include <vector>

#include "bench_support.h"
#include "mtlsim/runtime.h"
#include "rms_norm_launch.h"
#include "shipped_kernels.h"
#ifdef MTLGEN_SIM_BENCH_POCL
#include <fstream>
#include <sstream>
#include <string>

#include <sys/types.h>
#include <unistd.h>

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#endif
// clang-format off
#include <kernels/rms_norm.metal>  // simulator copies (see mtlsim_prepare_msl)
#include <kernels/argmax.metal>
#include <rms_norm_loops.inc>  // the loop forms (mtlgen_loop_form, see CMakeLists.txt)
#include <argmax_loops.inc>
// clang-format on

namespace {

using Clock = std::chrono::steady_clock;
using sim_bench::median;
using sim_bench::normal_floats;

double cpu_seconds(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}
double process_cpu() { return cpu_seconds(CLOCK_PROCESS_CPUTIME_ID); }
double thread_cpu() { return cpu_seconds(CLOCK_THREAD_CPUTIME_ID); }

// Each iteration times one simulated dispatch (the benchmark's manual time) and one serial
// run right after it, so both see the same machine load; the ratio is of the two medians.
template <class Sim, class Serial>
void run_against_serial(benchmark::State& state, Sim&& sim, Serial&& serial) {
  std::vector<double> sim_s, serial_s, sim_cpu, serial_cpu;
  uint64_t switches = 0;
  for (auto _ : state) {
    auto start = Clock::now();
    double cpu = process_cpu();
    const mtlsim::DispatchResult r = sim();
    sim_cpu.push_back(process_cpu() - cpu);
    sim_s.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    state.SetIterationTime(sim_s.back());
    serial();  // untimed: the timed run below finds its data in cache, as in run_pocl_against_serial
    start = Clock::now();
    cpu = thread_cpu();
    serial();
    serial_cpu.push_back(thread_cpu() - cpu);
    serial_s.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    switches += r.fiber_switches;
    if (!r.ok()) state.SkipWithError(r.issues.front().message.c_str());
  }
  const double sim_med = median(sim_s), serial_med = median(serial_s);
  state.counters["serial_us"] = serial_med * 1e6;
  state.counters["sim_us"] = sim_med * 1e6;
  state.counters["sim_over_serial"] = sim_med / serial_med;
  state.counters["sim_cpu_over_serial"] = median(sim_cpu) / median(serial_cpu);
  state.counters["switches"] = double(switches) / double(state.iterations());
}

// ---- rms_norm 64 x 2048, threadgroup 512 ----
using sim_bench::kCols;
using sim_bench::kEps;
using sim_bench::kRmsTg;
using sim_bench::kRows;
using sim_bench::RmsArgs;

void launch_rms_norm(const mtlsim::ThreadContext& tc, void* user) {
  auto& a = *static_cast<RmsArgs*>(user);
  rms_norm<float, kRmsTg>(a.x, a.w, a.y, a.n, a.eps, static_cast<float*>(tc.threadgroup_memory[0]),
                          tc.threadgroup_position_in_grid.x, tc.thread_position_in_threadgroup.x,
                          tc.thread_index_in_simdgroup, tc.simdgroup_index_in_threadgroup);
}

void group_rms_norm(const mtlsim::detail::LoopRun& run, void* user) {
  auto& a = *static_cast<RmsArgs*>(user);
  const mtlsim::ThreadContext& tc = run.contexts[0];
  mtlsim_loops_rms_norm<float, kRmsTg>(a.x, a.w, a.y, a.n, a.eps, static_cast<float*>(tc.threadgroup_memory[0]),
                                       tc.threadgroup_position_in_grid.x, tc.thread_position_in_threadgroup.x,
                                       tc.thread_index_in_simdgroup, tc.simdgroup_index_in_threadgroup, run);
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
  const std::vector<float> x = normal_floats(kRows * kCols, 1), w = normal_floats(kCols, 2);
  std::vector<float> y(x.size()), y_ref(x.size());
  RmsArgs args{x.data(), w.data(), y.data(), kCols, kEps};
  mtlsim::DispatchOptions o;
  o.threadgroups = {kRows, 1, 1};
  o.threads_per_threadgroup = {kRmsTg, 1, 1};
  o.threadgroup_arrays = {{kRmsTg / 32 * sizeof(float), {}}};
  o.workers = int(state.range(0));
  o.group_fn = state.range(1) ? group_rms_norm : nullptr;
  o.kernel_name = "rms_norm_f32_tg512";
  run_against_serial(
      state, [&] { return mtlsim::dispatch(o, launch_rms_norm, &args); },
      [&] { serial_rms_norm(x.data(), w.data(), y_ref.data(), kRows, kCols, kEps); });
  for (size_t i = 0; i < y.size(); i += 97)
    if (std::fabs(y[i] - y_ref[i]) > 1e-4f * (1 + std::fabs(y_ref[i]))) state.SkipWithError("rms_norm mismatch");
}
BENCHMARK(BM_RmsNorm)->ArgsProduct({{1, 2}, {0, 1}})->UseManualTime()->Unit(benchmark::kMicrosecond);

double seconds_of(const std::function<mtlsim::DispatchResult()>& run, mtlsim::DispatchResult& result) {
  const auto start = Clock::now();
  result = run();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void BM_RmsNormExactRaces(benchmark::State& state) {
  const std::vector<float> x = normal_floats(kRows * kCols, 1), w = normal_floats(kCols, 2);
  std::vector<float> y(x.size());
  RmsArgs args{x.data(), w.data(), y.data(), kCols, kEps};
  mtlsim::DispatchOptions o;
  o.threadgroups = {kRows, 1, 1};
  o.threads_per_threadgroup = {kRmsTg, 1, 1};
  o.threadgroup_arrays = {{kRmsTg / 32 * sizeof(float), {}, "partial", sizeof(float)}};
  o.workers = 1;
  o.kernel_name = "rms_norm_f32_tg512";
  mtlsim::DispatchOptions detect = o;
  detect.detect_races = true;
  detect.race_buffers = {{"y", y.data(), y.size() * sizeof(float), sizeof(float)}};
  std::vector<double> plain_s, instrumented_s, races_s;
  mtlsim::DispatchResult r;
  for (auto _ : state) {
    plain_s.push_back(seconds_of([&] { return mtlsim::dispatch(o, launch_rms_norm, &args); }, r));
    instrumented_s.push_back(seconds_of([&] { return mtlsim::dispatch(o, sim_bench::launch_rms_norm_races, &args); }, r));
    races_s.push_back(seconds_of([&] { return mtlsim::dispatch(detect, sim_bench::launch_rms_norm_races, &args); }, r));
    state.SetIterationTime(races_s.back());
    if (!r.ok() || r.races_total != 0) state.SkipWithError("the race detector reported rms_norm");
  }
  const double plain = median(plain_s);
  state.counters["sim_us"] = plain * 1e6;
  state.counters["instrumented_over_sim"] = median(instrumented_s) / plain;
  state.counters["races_over_sim"] = median(races_s) / plain;
}
BENCHMARK(BM_RmsNormExactRaces)->UseManualTime()->Unit(benchmark::kMicrosecond);

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

void group_argmax(const mtlsim::detail::LoopRun& run, void* user) {
  auto& a = *static_cast<ArgmaxArgs*>(user);
  const mtlsim::ThreadContext& tc = run.contexts[0];
  mtlsim_loops_argmax<kArgmaxTg>(a.x, a.out, a.n, static_cast<float*>(tc.threadgroup_memory[0]),
                                 static_cast<uint*>(tc.threadgroup_memory[1]), tc.threadgroup_position_in_grid.x,
                                 tc.thread_position_in_threadgroup.x, tc.thread_index_in_simdgroup,
                                 tc.simdgroup_index_in_threadgroup, run);
}

uint serial_argmax(const float* x, uint n) {
  float best = -INFINITY;
  uint best_i = 0xFFFFFFFFu;
  for (uint i = 0; i < n; ++i)
    if (x[i] > best || (x[i] == best && best_i == 0xFFFFFFFFu)) best = x[i], best_i = i;
  return best_i == 0xFFFFFFFFu ? 0 : best_i;
}

void BM_Argmax(benchmark::State& state) {
  const std::vector<float> x = normal_floats(kVocab, 3);
  uint out = 0, ref = 0;
  ArgmaxArgs args{x.data(), &out, kVocab};
  mtlsim::DispatchOptions o;
  o.threadgroups = {1, 1, 1};
  o.threads_per_threadgroup = {kArgmaxTg, 1, 1};
  o.threadgroup_arrays = {{kArgmaxTg / 32 * sizeof(float), {}}, {kArgmaxTg / 32 * sizeof(uint), {0}}};
  o.workers = int(state.range(0));
  o.group_fn = state.range(1) ? group_argmax : nullptr;
  o.kernel_name = "argmax_f32_tg1024";
  run_against_serial(
      state, [&] { return mtlsim::dispatch(o, launch_argmax, &args); },
      [&] { benchmark::DoNotOptimize(ref = serial_argmax(x.data(), kVocab)); });
  if (out != ref) state.SkipWithError("argmax mismatch");
}
BENCHMARK(BM_Argmax)->ArgsProduct({{1, 2}, {0, 1}})->UseManualTime()->Unit(benchmark::kMicrosecond);

// ---- shipped kernels (out/<kernel>/<kernel>.metal, shipped_*.cpp): one matvec, sdpa, one scan backward ----
// Same (workers, path) arguments; path 1 runs the loop form where the front end makes one
// (q4_0_matvec, both rglru dispatches); sdpa_vector has none and runs as fibers only. Each checks
// the simulator's output against its serial twin after the timed loop (a mismatch fails the case).
using sim_bench::kQ4BlockBytes;
using sim_bench::kQ4K;
using sim_bench::kQ4Rows;
using sim_bench::kScanDim;
using sim_bench::kScanLen;
using sim_bench::kScanSeg;
using sim_bench::kSdpaD;
using sim_bench::kSdpaHeads;
using sim_bench::kSdpaKeys;
using sim_bench::kSdpaKvHeads;

// q4_0 weights: per block a half scale in [0.01, 0.05) and 16 random bytes of nibbles.
std::vector<uint8_t> q4_0_weights(uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> scale(0.01f, 0.05f);
  const size_t blocks = size_t(kQ4Rows) * (kQ4K / 32);
  std::vector<uint8_t> w(blocks * kQ4BlockBytes);
  for (size_t b = 0; b < blocks; ++b) {
    const _Float16 d = _Float16(scale(rng));
    std::memcpy(&w[b * kQ4BlockBytes], &d, sizeof d);
    for (uint j = 2; j < kQ4BlockBytes; ++j) w[b * kQ4BlockBytes + j] = uint8_t(rng());
  }
  return w;
}

// y[r] = sum over blocks of d * sum_j (q_j - 8) x_j, as the kernel computes it per block.
void serial_q4_0_matvec(const uint8_t* w, const float* x, float* y) {
  const uint blocks = kQ4K / 32;
  for (uint r = 0; r < kQ4Rows; ++r) {
    float acc = 0.0f;
    for (uint b = 0; b < blocks; ++b) {
      const uint8_t* blk = w + (size_t(r) * blocks + b) * kQ4BlockBytes;
      _Float16 d;
      std::memcpy(&d, blk, sizeof d);
      const float* xb = x + b * 32;
      float qx = 0.0f;
      for (uint j = 0; j < 16; ++j)
        qx += float((blk[2 + j] & 0xF) - 8) * xb[j] + float((blk[2 + j] >> 4) - 8) * xb[j + 16];
      acc += float(d) * qx;
    }
    y[r] = acc;
  }
}

// The first row where y and the serial y_ref differ by more than rounding allows (1e-5 of the
// row's sum of |terms|, the summation orders differ), or -1.
long q4_0_mismatch(const uint8_t* w, const float* x, const float* y, const float* y_ref) {
  const uint blocks = kQ4K / 32;
  for (uint r = 0; r < kQ4Rows; ++r) {
    double bound = 0;
    for (uint b = 0; b < blocks; ++b) {
      const uint8_t* blk = w + (size_t(r) * blocks + b) * kQ4BlockBytes;
      _Float16 d;
      std::memcpy(&d, blk, sizeof d);
      for (uint j = 0; j < 16; ++j)
        bound += std::fabs(double(d)) * (std::abs((blk[2 + j] & 0xF) - 8) * std::fabs(x[b * 32 + j]) +
                                         std::abs((blk[2 + j] >> 4) - 8) * std::fabs(x[b * 32 + j + 16]));
    }
    if (!(std::fabs(double(y[r]) - double(y_ref[r])) <= 1e-5 * bound + 1e-6)) return long(r);
  }
  return -1;
}

void BM_Q4_0Matvec(benchmark::State& state) {
  const std::vector<uint8_t> w = q4_0_weights(4);
  const std::vector<float> x = normal_floats(kQ4K, 5);
  std::vector<float> y(kQ4Rows), y_ref(kQ4Rows);
  sim_bench::Q4Args args{w.data(), x.data(), y.data()};
  run_against_serial(
      state, [&] { return sim_bench::dispatch_q4_0_matvec(args, int(state.range(0)), state.range(1) != 0); },
      [&] { serial_q4_0_matvec(w.data(), x.data(), y_ref.data()); });
  if (q4_0_mismatch(w.data(), x.data(), y.data(), y_ref.data()) >= 0) state.SkipWithError("q4_0_matvec mismatch");
}
BENCHMARK(BM_Q4_0Matvec)->ArgsProduct({{1, 2}, {0, 1}})->UseManualTime()->Unit(benchmark::kMicrosecond);

// bf16 (round to nearest even) of normal floats, as bits.
std::vector<uint16_t> random_bf16(size_t n, uint32_t seed) {
  const std::vector<float> f = normal_floats(n, seed);
  std::vector<uint16_t> v(n);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t b = std::bit_cast<uint32_t>(f[i]);
    v[i] = uint16_t((b + 0x7FFFu + ((b >> 16) & 1u)) >> 16);
  }
  return v;
}
float bf16(uint16_t b) { return std::bit_cast<float>(uint32_t(b) << 16); }

// Per head: scores scale * q.k_j, their max, weights exp(s - max), out = sum w v / sum w.
void serial_sdpa_vector(const float* q, const uint16_t* k, const uint16_t* v, float* out, float* scores) {
  const float scale = 1.0f / std::sqrt(float(kSdpaD));
  for (uint h = 0; h < kSdpaHeads; ++h) {
    const size_t kv = size_t(h / (kSdpaHeads / kSdpaKvHeads)) * kSdpaKeys * kSdpaD;
    float qs[kSdpaD];
    for (uint i = 0; i < kSdpaD; ++i) qs[i] = scale * q[h * kSdpaD + i];
    float m = -INFINITY, sum = 0.0f;
    for (uint j = 0; j < kSdpaKeys; ++j) {
      float s = 0.0f;
      for (uint i = 0; i < kSdpaD; ++i) s += qs[i] * bf16(k[kv + size_t(j) * kSdpaD + i]);
      scores[j] = s;
      m = std::max(m, s);
    }
    float* o = out + h * kSdpaD;
    std::fill(o, o + kSdpaD, 0.0f);
    for (uint j = 0; j < kSdpaKeys; ++j) {
      const float wj = std::exp(scores[j] - m);
      sum += wj;
      for (uint i = 0; i < kSdpaD; ++i) o[i] += wj * bf16(v[kv + size_t(j) * kSdpaD + i]);
    }
    for (uint i = 0; i < kSdpaD; ++i) o[i] /= sum;
  }
}

// The first element where out and the serial ref differ by more than 1e-4 (relative, outputs are
// weighted means of N(0, 1) values), or -1.
long float_mismatch(const float* out, const float* ref, size_t n, float tolerance) {
  for (size_t i = 0; i < n; ++i)
    if (!(std::fabs(out[i] - ref[i]) <= tolerance * (1 + std::fabs(ref[i])))) return long(i);
  return -1;
}

struct SdpaData {
  std::vector<float> q = normal_floats(kSdpaHeads * kSdpaD, 6);
  std::vector<uint16_t> k = random_bf16(size_t(kSdpaKvHeads) * kSdpaKeys * kSdpaD, 7),
                        v = random_bf16(size_t(kSdpaKvHeads) * kSdpaKeys * kSdpaD, 8);
};

void BM_SdpaVector(benchmark::State& state) {
  if (state.range(1) != 0 && !sim_bench::sdpa_vector_has_loop_form()) {
    state.SkipWithError("sdpa_vector has no loop form");
    return;
  }
  const SdpaData data;
  std::vector<float> out(kSdpaHeads * kSdpaD), ref(out.size()), scores(kSdpaKeys);
  sim_bench::SdpaArgs args{data.q.data(), data.k.data(), data.v.data(), out.data()};
  run_against_serial(
      state, [&] { return sim_bench::dispatch_sdpa_vector(args, int(state.range(0)), state.range(1) != 0); },
      [&] { serial_sdpa_vector(data.q.data(), data.k.data(), data.v.data(), ref.data(), scores.data()); });
  if (float_mismatch(out.data(), ref.data(), out.size(), 1e-4f) >= 0) state.SkipWithError("sdpa_vector mismatch");
}
BENCHMARK(BM_SdpaVector)->ArgsProduct({{1, 2}, {0, 1}})->UseManualTime()->Unit(benchmark::kMicrosecond);

// rglru_scan_backward's inputs: gates a in [0.5, 1), the rest N(0, 1).
struct ScanData {
  std::vector<float> a, b = normal_floats(size_t(kScanLen) * kScanDim, 10), h0 = normal_floats(kScanDim, 11),
                        dy = normal_floats(size_t(kScanLen) * kScanDim, 12), dh_final = normal_floats(kScanDim, 13);
  ScanData() : a(size_t(kScanLen) * kScanDim) {
    std::mt19937 rng(9);
    std::uniform_real_distribution<float> gate(0.5f, 1.0f);
    for (float& g : a) g = gate(rng);
  }
};
struct ScanGrads {
  std::vector<float> checkpoints = std::vector<float>(size_t(kScanLen / kScanSeg) * kScanDim),
                     da = std::vector<float>(size_t(kScanLen) * kScanDim), db = da, dh0 = std::vector<float>(kScanDim);
};

// The family's two passes per lane (batch 1): checkpoints every seg steps of h = fma(a, h, b), then
// segments last to first, each recomputed from its checkpoint and walked backward.
void serial_rglru_scan_backward(const ScanData& in, ScanGrads& g) {
  const size_t dim = kScanDim;
  for (size_t d = 0; d < dim; ++d) {
    float h = in.h0[d];
    for (size_t t = 0; t < kScanLen; ++t) {
      if (t % kScanSeg == 0) g.checkpoints[t / kScanSeg * dim + d] = h;
      h = std::fma(in.a[t * dim + d], h, in.b[t * dim + d]);
    }
  }
  float before[kScanSeg];
  for (size_t d = 0; d < dim; ++d) {
    float grad = in.dh_final[d];
    for (size_t s = kScanLen / kScanSeg; s-- > 0;) {
      float h = g.checkpoints[s * dim + d];
      for (size_t k = 0; k < kScanSeg; ++k) {
        const size_t i = (s * kScanSeg + k) * dim + d;
        before[k] = h;
        h = std::fma(in.a[i], h, in.b[i]);
      }
      for (size_t k = kScanSeg; k-- > 0;) {
        const size_t i = (s * kScanSeg + k) * dim + d;
        grad += in.dy[i];
        g.da[i] = grad * before[k];
        g.db[i] = grad;
        grad *= in.a[i];
      }
    }
    g.dh0[d] = grad;
  }
}

void BM_RglruScanBackward(benchmark::State& state) {
  const ScanData in;
  ScanGrads sim, ref;
  sim_bench::ScanArgs args{in.a.data(),           in.b.data(),  in.h0.data(), in.dy.data(), in.dh_final.data(),
                           sim.checkpoints.data(), sim.da.data(), sim.db.data(), sim.dh0.data()};
  run_against_serial(
      state, [&] { return sim_bench::dispatch_rglru_scan_backward(args, int(state.range(0)), state.range(1) != 0); },
      [&] { serial_rglru_scan_backward(in, ref); });
  // Every f32 operation is the serial twin's, in its order: the gradients agree to rounding.
  if (float_mismatch(sim.da.data(), ref.da.data(), sim.da.size(), 1e-6f) >= 0 ||
      float_mismatch(sim.db.data(), ref.db.data(), sim.db.size(), 1e-6f) >= 0 ||
      float_mismatch(sim.dh0.data(), ref.dh0.data(), sim.dh0.size(), 1e-6f) >= 0)
    state.SkipWithError("rglru_scan_backward mismatch");
}
BENCHMARK(BM_RglruScanBackward)->ArgsProduct({{1, 2}, {0, 1}})->UseManualTime()->Unit(benchmark::kMicrosecond);

#ifdef MTLGEN_SIM_BENCH_POCL
// ---- PoCL (OpenCL on the CPU) running OpenCL C twins of the same kernels ----
// PoCL reads its thread count once per process (when the platform is first queried) and its
// CPU device does not support sub-devices, so each thread count gets its own helper process,
// forked on first use before this process ever loads OpenCL: the helper sets
// POCL_MAX_PTHREAD_COUNT / POCL_CPU_MAX_CU_NUM, picks the "Portable Computing Language"
// platform, builds the program once, sets up both kernels with the same data as the simulator
// benchmarks, warms them up, and then per request times one enqueue + clFinish followed by one
// serial run (both measured inside the helper, back to back) and sends the two times back.
struct PoclKernelRun {
  cl_kernel k = nullptr;
  size_t global = 0, local = 0;
  std::vector<cl_mem> buffers;
};

enum PoclKernelId : int { kPoclRmsNorm = 0, kPoclArgmax = 1, kPoclQ4_0Matvec = 2, kPoclSdpaVector = 3, kPoclKernels = 4 };
enum PoclOp : int { kPoclIterate = 0, kPoclCheck = 1 };

struct PoclRequest {
  int op, which;
};
struct PoclReply {
  double cl_s = 0, serial_s = 0, cl_cpu = 0, serial_cpu = 0;
  char error[160] = {};
};

std::string read_cl(const char* name) {
  std::ifstream in(std::string(MTLGEN_SIM_BENCH_CL_DIR) + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool write_all(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = ::write(fd, c, n);
    if (w <= 0) return false;
    c += w, n -= size_t(w);
  }
  return true;
}
bool read_all(int fd, void* p, size_t n) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t r = ::read(fd, c, n);
    if (r <= 0) return false;
    c += r, n -= size_t(r);
  }
  return true;
}

// The helper process body: never returns.
[[noreturn]] void pocl_helper(int threads, int in_fd, int out_fd) {
  PoclReply hello;
  auto fail = [&](const std::string& msg) {
    std::snprintf(hello.error, sizeof hello.error, "%s", msg.c_str());
    write_all(out_fd, &hello, sizeof hello);
    _exit(0);
  };
  const std::string t = std::to_string(threads);
  setenv("POCL_MAX_PTHREAD_COUNT", t.c_str(), 1);
  setenv("POCL_CPU_MAX_CU_NUM", t.c_str(), 1);
  cl_uint np = 0;
  if (clGetPlatformIDs(0, nullptr, &np) != CL_SUCCESS || np == 0) fail("no PoCL platform");
  std::vector<cl_platform_id> ps(np);
  clGetPlatformIDs(np, ps.data(), nullptr);
  cl_platform_id platform = nullptr;
  for (cl_platform_id p : ps) {
    char name[256] = {};
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, nullptr);
    if (std::string(name).find("Portable Computing Language") != std::string::npos) platform = p;
  }
  if (!platform) fail("no PoCL platform");
  cl_device_id dev = nullptr;
  cl_uint nd = 0;
  if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_CPU, 1, &dev, &nd) != CL_SUCCESS || nd == 0) fail("no PoCL CPU device");
  cl_int err = CL_SUCCESS;
  cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
  if (err != CL_SUCCESS) fail("clCreateContext failed");
  cl_command_queue queue = clCreateCommandQueue(ctx, dev, 0, &err);
  if (err != CL_SUCCESS) fail("clCreateCommandQueue failed");
  const std::string src = read_cl("rms_norm.cl") + "\n" + read_cl("argmax.cl") + "\n" + read_cl("q4_0_matvec.cl") + "\n" +
                          read_cl("sdpa_vector.cl");
  if (src.size() < 2) fail("cannot read kernels/*.cl from " MTLGEN_SIM_BENCH_CL_DIR);
  const char* text = src.c_str();
  cl_program program = clCreateProgramWithSource(ctx, 1, &text, nullptr, &err);
  if (err != CL_SUCCESS) fail("clCreateProgramWithSource failed");
  if (clBuildProgram(program, 1, &dev, "-cl-std=CL1.2", nullptr, nullptr) != CL_SUCCESS) {
    size_t len = 0;
    clGetProgramBuildInfo(program, dev, CL_PROGRAM_BUILD_LOG, 0, nullptr, &len);
    std::string log(len, '\0');
    clGetProgramBuildInfo(program, dev, CL_PROGRAM_BUILD_LOG, len, log.data(), nullptr);
    std::fprintf(stderr, "PoCL build log:\n%s\n", log.c_str());
    fail("PoCL program build failed");
  }

  // Same data as BM_RmsNorm / BM_Argmax / BM_Q4_0Matvec / BM_SdpaVector.
  const std::vector<float> rx = normal_floats(kRows * kCols, 1), rw = normal_floats(kCols, 2);
  std::vector<float> ry(rx.size()), ry_ref(rx.size());
  const std::vector<float> ax = normal_floats(kVocab, 3);
  uint aref = 0;
  const std::vector<uint8_t> qw = q4_0_weights(4);
  const std::vector<float> qx = normal_floats(kQ4K, 5);
  std::vector<float> qy(kQ4Rows), qy_ref(kQ4Rows);
  const SdpaData sd;
  std::vector<float> sout(kSdpaHeads * kSdpaD), sout_ref(sout.size()), sscores(kSdpaKeys);

  auto buffer = [&](cl_mem_flags flags, size_t bytes, const void* host) {
    cl_mem m = clCreateBuffer(ctx, flags | (host ? CL_MEM_COPY_HOST_PTR : 0), bytes, const_cast<void*>(host), &err);
    if (err != CL_SUCCESS) fail("clCreateBuffer failed");
    return m;
  };
  PoclKernelRun runs[kPoclKernels];
  {
    PoclKernelRun& r = runs[kPoclRmsNorm];
    r.k = clCreateKernel(program, "rms_norm_f32_tg512", &err);
    if (err != CL_SUCCESS) fail("clCreateKernel(rms_norm_f32_tg512) failed");
    r.buffers = {buffer(CL_MEM_READ_ONLY, rx.size() * sizeof(float), rx.data()),
                 buffer(CL_MEM_READ_ONLY, rw.size() * sizeof(float), rw.data()),
                 buffer(CL_MEM_WRITE_ONLY, ry.size() * sizeof(float), nullptr)};
    const cl_uint n = kCols;
    const cl_float eps = kEps;
    for (cl_uint i = 0; i < 3; ++i) clSetKernelArg(r.k, i, sizeof(cl_mem), &r.buffers[i]);
    clSetKernelArg(r.k, 3, sizeof n, &n);
    clSetKernelArg(r.k, 4, sizeof eps, &eps);
    r.global = size_t(kRows) * kRmsTg, r.local = kRmsTg;
  }
  {
    PoclKernelRun& r = runs[kPoclArgmax];
    r.k = clCreateKernel(program, "argmax_f32_tg1024", &err);
    if (err != CL_SUCCESS) fail("clCreateKernel(argmax_f32_tg1024) failed");
    const cl_uint poison = 0xDEADBEEFu;
    r.buffers = {buffer(CL_MEM_READ_ONLY, ax.size() * sizeof(float), ax.data()),
                 buffer(CL_MEM_READ_WRITE, sizeof(cl_uint), &poison)};
    const cl_uint n = kVocab;
    for (cl_uint i = 0; i < 2; ++i) clSetKernelArg(r.k, i, sizeof(cl_mem), &r.buffers[i]);
    clSetKernelArg(r.k, 2, sizeof n, &n);
    r.global = kArgmaxTg, r.local = kArgmaxTg;
  }
  {
    PoclKernelRun& r = runs[kPoclQ4_0Matvec];
    r.k = clCreateKernel(program, "q4_0_matvec_f32_tg64_rps4", &err);
    if (err != CL_SUCCESS) fail("clCreateKernel(q4_0_matvec_f32_tg64_rps4) failed");
    r.buffers = {buffer(CL_MEM_READ_ONLY, qw.size(), qw.data()),
                 buffer(CL_MEM_READ_ONLY, qx.size() * sizeof(float), qx.data()),
                 buffer(CL_MEM_WRITE_ONLY, qy.size() * sizeof(float), nullptr)};
    const cl_uint rows = kQ4Rows, k = kQ4K;
    for (cl_uint i = 0; i < 3; ++i) clSetKernelArg(r.k, i, sizeof(cl_mem), &r.buffers[i]);
    clSetKernelArg(r.k, 3, sizeof rows, &rows);
    clSetKernelArg(r.k, 4, sizeof k, &k);
    r.local = sim_bench::kQ4Tg;
    r.global = size_t(kQ4Rows + r.local / 32 * sim_bench::kQ4Rps - 1) / (r.local / 32 * sim_bench::kQ4Rps) * r.local;
  }
  {
    PoclKernelRun& r = runs[kPoclSdpaVector];
    r.k = clCreateKernel(program, "sdpa_vector_f32_bf16_tg1024_d128", &err);
    if (err != CL_SUCCESS) fail("clCreateKernel(sdpa_vector_f32_bf16_tg1024_d128) failed");
    r.buffers = {buffer(CL_MEM_READ_ONLY, sd.q.size() * sizeof(float), sd.q.data()),
                 buffer(CL_MEM_READ_ONLY, sd.k.size() * sizeof(uint16_t), sd.k.data()),
                 buffer(CL_MEM_READ_ONLY, sd.v.size() * sizeof(uint16_t), sd.v.data()),
                 buffer(CL_MEM_WRITE_ONLY, sout.size() * sizeof(float), nullptr)};
    const cl_uint dims[4] = {kSdpaHeads, kSdpaKvHeads, kSdpaKeys, kSdpaKeys};  // n_heads, n_kv_heads, kv_len, capacity
    const cl_float scale = 0.0f;
    for (cl_uint i = 0; i < 4; ++i) clSetKernelArg(r.k, i, sizeof(cl_mem), &r.buffers[i]);
    for (cl_uint i = 0; i < 4; ++i) clSetKernelArg(r.k, 4 + i, sizeof(cl_uint), &dims[i]);
    clSetKernelArg(r.k, 8, sizeof scale, &scale);
    r.global = size_t(kSdpaHeads) * sim_bench::kSdpaTg, r.local = sim_bench::kSdpaTg;
  }
  // Warm-up: PoCL compiles the work-group function for the local size on first enqueue.
  for (const PoclKernelRun& r : runs)
    if (clEnqueueNDRangeKernel(queue, r.k, 1, nullptr, &r.global, &r.local, 0, nullptr, nullptr) != CL_SUCCESS ||
        clFinish(queue) != CL_SUCCESS)
      fail("PoCL enqueue failed");
  write_all(out_fd, &hello, sizeof hello);  // ready

  PoclRequest req;
  while (read_all(in_fd, &req, sizeof req)) {
    PoclReply rep;
    const PoclKernelRun& r = runs[req.which];
    if (req.op == kPoclIterate) {
      auto start = Clock::now();
      double cpu = process_cpu();
      clEnqueueNDRangeKernel(queue, r.k, 1, nullptr, &r.global, &r.local, 0, nullptr, nullptr);
      clFinish(queue);
      rep.cl_cpu = process_cpu() - cpu;
      rep.cl_s = std::chrono::duration<double>(Clock::now() - start).count();
      const auto serial = [&] {
        switch (req.which) {
          case kPoclRmsNorm: serial_rms_norm(rx.data(), rw.data(), ry_ref.data(), kRows, kCols, kEps); break;
          case kPoclArgmax: benchmark::DoNotOptimize(aref = serial_argmax(ax.data(), kVocab)); break;
          case kPoclQ4_0Matvec: serial_q4_0_matvec(qw.data(), qx.data(), qy_ref.data()); break;
          default: serial_sdpa_vector(sd.q.data(), sd.k.data(), sd.v.data(), sout_ref.data(), sscores.data());
        }
      };
      serial();  // untimed: the timed run finds its data in cache, as in run_against_serial
      start = Clock::now();
      cpu = thread_cpu();
      serial();
      rep.serial_cpu = thread_cpu() - cpu;
      rep.serial_s = std::chrono::duration<double>(Clock::now() - start).count();
    } else if (req.which == kPoclRmsNorm) {  // check: PoCL output vs the serial loop
      serial_rms_norm(rx.data(), rw.data(), ry_ref.data(), kRows, kCols, kEps);
      clEnqueueReadBuffer(queue, r.buffers[2], CL_TRUE, 0, ry.size() * sizeof(float), ry.data(), 0, nullptr, nullptr);
      for (size_t i = 0; i < ry.size(); ++i)
        if (!(std::fabs(ry[i] - ry_ref[i]) <= 1e-4f * (1 + std::fabs(ry_ref[i])))) {
          std::snprintf(rep.error, sizeof rep.error, "PoCL rms_norm mismatch at %zu: %g vs %g", i, double(ry[i]),
                        double(ry_ref[i]));
          break;
        }
    } else if (req.which == kPoclQ4_0Matvec) {
      serial_q4_0_matvec(qw.data(), qx.data(), qy_ref.data());
      clEnqueueReadBuffer(queue, r.buffers[2], CL_TRUE, 0, qy.size() * sizeof(float), qy.data(), 0, nullptr, nullptr);
      if (const long row = q4_0_mismatch(qw.data(), qx.data(), qy.data(), qy_ref.data()); row >= 0)
        std::snprintf(rep.error, sizeof rep.error, "PoCL q4_0_matvec mismatch at row %ld: %g vs %g", row,
                      double(qy[size_t(row)]), double(qy_ref[size_t(row)]));
    } else if (req.which == kPoclSdpaVector) {
      serial_sdpa_vector(sd.q.data(), sd.k.data(), sd.v.data(), sout_ref.data(), sscores.data());
      clEnqueueReadBuffer(queue, r.buffers[3], CL_TRUE, 0, sout.size() * sizeof(float), sout.data(), 0, nullptr,
                          nullptr);
      if (const long i = float_mismatch(sout.data(), sout_ref.data(), sout.size(), 1e-4f); i >= 0)
        std::snprintf(rep.error, sizeof rep.error, "PoCL sdpa_vector mismatch at %ld: %g vs %g", i,
                      double(sout[size_t(i)]), double(sout_ref[size_t(i)]));
    } else {
      aref = serial_argmax(ax.data(), kVocab);
      cl_uint out = 0;
      clEnqueueReadBuffer(queue, r.buffers[1], CL_TRUE, 0, sizeof out, &out, 0, nullptr, nullptr);
      if (out != aref) std::snprintf(rep.error, sizeof rep.error, "PoCL argmax mismatch: %u vs %u", out, aref);
    }
    if (!write_all(out_fd, &rep, sizeof rep)) break;
  }
  _exit(0);
}

struct PoclHelper {
  int to = -1, from = -1;
  std::string error;  // non-empty: unusable
};

// The helper for `threads` (1 or 2), started once per process.
PoclHelper& pocl_helper_for(int threads) {
  static PoclHelper helpers[3];
  static bool started[3] = {};
  PoclHelper& h = helpers[threads];
  if (started[threads]) return h;
  started[threads] = true;
  int down[2], up[2];
  if (pipe(down) != 0 || pipe(up) != 0) return h.error = "pipe failed", h;
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return h.error = "fork failed", h;
  if (pid == 0) {
    close(down[1]);
    close(up[0]);
    pocl_helper(threads, down[0], up[1]);
  }
  close(down[0]);
  close(up[1]);
  h.to = down[1], h.from = up[0];
  PoclReply hello;
  if (!read_all(h.from, &hello, sizeof hello)) h.error = "PoCL helper died during setup";
  else if (hello.error[0]) h.error = hello.error;
  return h;
}

// Like run_against_serial; the times come from the helper (enqueue + clFinish, then serial).
void run_pocl_against_serial(benchmark::State& state, PoclKernelId which) {
  PoclHelper& h = pocl_helper_for(int(state.range(0)));
  if (!h.error.empty()) return state.SkipWithError(h.error.c_str());
  std::vector<double> cl_s, serial_s, cl_cpu, serial_cpu;
  PoclReply rep;
  for (auto _ : state) {
    const PoclRequest req{kPoclIterate, which};
    if (!write_all(h.to, &req, sizeof req) || !read_all(h.from, &rep, sizeof rep)) {
      h.error = "PoCL helper died";
      state.SkipWithError(h.error.c_str());
      break;
    }
    cl_s.push_back(rep.cl_s);
    serial_s.push_back(rep.serial_s);
    cl_cpu.push_back(rep.cl_cpu);
    serial_cpu.push_back(rep.serial_cpu);
    state.SetIterationTime(rep.cl_s);
  }
  if (!h.error.empty()) return;
  const PoclRequest check{kPoclCheck, which};
  if (!write_all(h.to, &check, sizeof check) || !read_all(h.from, &rep, sizeof rep))
    return state.SkipWithError("PoCL helper died");
  if (rep.error[0]) return state.SkipWithError(rep.error);
  const double cl_med = median(cl_s), serial_med = median(serial_s);
  state.counters["serial_us"] = serial_med * 1e6;
  state.counters["pocl_us"] = cl_med * 1e6;
  state.counters["pocl_over_serial"] = cl_med / serial_med;
  state.counters["pocl_cpu_over_serial"] = median(cl_cpu) / median(serial_cpu);
}

void BM_PoclRmsNorm(benchmark::State& state) { run_pocl_against_serial(state, kPoclRmsNorm); }
BENCHMARK(BM_PoclRmsNorm)->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMicrosecond);

void BM_PoclArgmax(benchmark::State& state) { run_pocl_against_serial(state, kPoclArgmax); }
BENCHMARK(BM_PoclArgmax)->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMicrosecond);

void BM_PoclQ4_0Matvec(benchmark::State& state) { run_pocl_against_serial(state, kPoclQ4_0Matvec); }
BENCHMARK(BM_PoclQ4_0Matvec)->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMicrosecond);

void BM_PoclSdpaVector(benchmark::State& state) { run_pocl_against_serial(state, kPoclSdpaVector); }
BENCHMARK(BM_PoclSdpaVector)->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMicrosecond);
#endif  // MTLGEN_SIM_BENCH_POCL

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
