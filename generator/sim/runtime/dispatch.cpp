// dispatch(): validates options, prepares what workers share, and spreads threadgroups over
// the calling thread plus a persistent pool of worker threads.
#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "worker.h"

namespace mtlsim {

namespace {
std::vector<uint8_t> le_bytes(uint32_t v, int n) {
  std::vector<uint8_t> out;
  for (int i = 0; i < n; ++i) out.push_back(uint8_t(v >> (8 * i)));
  return out;
}
}  // namespace

std::vector<uint8_t> poison_pattern_f32() { return le_bytes(poison_bits_f32(), 4); }
std::vector<uint8_t> poison_pattern_f16() { return le_bytes(poison_bits_f16(), 2); }
std::vector<uint8_t> poison_pattern_bf16() { return le_bytes(poison_bits_bf16(), 2); }

const char* to_string(LaneOrder order) noexcept {
  switch (order) {
    case LaneOrder::forward: return "forward";
    case LaneOrder::reverse: return "reverse";
    case LaneOrder::shuffled: return "shuffled";
  }
  return "?";
}

const char* to_string(SimIssue::Kind kind) noexcept {
  switch (kind) {
    case SimIssue::Kind::barrier_early_exit: return "barrier_early_exit";
    case SimIssue::Kind::barrier_divergence: return "barrier_divergence";
    case SimIssue::Kind::simd_divergence: return "simd_divergence";
    case SimIssue::Kind::deadlock: return "deadlock";
    case SimIssue::Kind::poison_in_collective: return "poison_in_collective";
    case SimIssue::Kind::threadgroup_memory_limit: return "threadgroup_memory_limit";
    case SimIssue::Kind::array_out_of_bounds: return "array_out_of_bounds";
  }
  return "?";
}

namespace detail {

const char* op_name(Op op) noexcept {
  static constexpr const char* names[] = {
      "none", "threadgroup_barrier", "simdgroup_barrier", "simd_sum", "simd_product", "simd_min",
      "simd_max", "simd_and", "simd_or", "simd_xor", "simd_shuffle", "simd_shuffle_down",
      "simd_shuffle_up", "simd_shuffle_xor", "simd_shuffle_rotate_down", "simd_shuffle_rotate_up",
      "simd_broadcast", "simd_broadcast_first", "simd_prefix_inclusive_sum",
      "simd_prefix_exclusive_sum", "simd_prefix_inclusive_product", "simd_prefix_exclusive_product",
      "simd_any", "simd_all", "simd_ballot", "simd_is_first", "simd_active_threads_mask",
      "simd_shuffle_and_fill_down", "simd_shuffle_and_fill_up", "quad_sum", "quad_product", "quad_min",
      "quad_max", "quad_and", "quad_or", "quad_xor", "quad_broadcast_first", "quad_prefix_inclusive_sum",
      "quad_prefix_exclusive_sum", "quad_prefix_inclusive_product", "quad_prefix_exclusive_product",
      "quad_shuffle", "quad_broadcast", "quad_shuffle_down", "quad_shuffle_up", "quad_shuffle_xor",
      "quad_shuffle_rotate_down", "quad_shuffle_rotate_up", "quad_shuffle_and_fill_down",
      "quad_shuffle_and_fill_up", "quad_any", "quad_all", "simdgroup_load", "simdgroup_store",
      "simdgroup_multiply", "simdgroup_multiply_accumulate"};
  static_assert(std::size(names) == size_t(Op::simdgroup_multiply_accumulate) + 1, "one name per Op");
  const size_t i = size_t(op);
  return i < std::size(names) ? names[i] : "?";
}

void outside_dispatch(Op op, int line) {
  std::fprintf(stderr, "mtlsim: %s at line %d called outside mtlsim::dispatch; kernels that use "
               "barriers or simd-group functions must run through the simulator runtime\n",
               op_name(op), line);
  std::abort();
}

namespace {
template <class T>
void add_unique(T* values, int& n, T v) {
  for (int i = 0; i < n; ++i)
    if (values[i] == v) return;
  if (n < PoisonSet::kMax) values[n++] = v;
}

// Pattern bytes repeated to `width` bytes, little-endian; false if the pattern does not tile.
bool tile(const std::vector<uint8_t>& pattern, size_t width, uint32_t& out) {
  if (pattern.empty() || width % pattern.size() != 0) return false;
  out = 0;
  for (size_t i = 0; i < width; ++i) out |= uint32_t(pattern[i % pattern.size()]) << (8 * i);
  return true;
}

// Only NaN patterns are recognisable in a collective's input; others (e.g. zero fill) are not.
void add_pattern(PoisonSet& ps, const std::vector<uint8_t>& pattern) {
  uint32_t v = 0;
  if (tile(pattern, 4, v) && (v & 0x7fffffffu) > 0x7f800000u) add_unique(ps.f32, ps.n32, v);
  if (tile(pattern, 2, v)) {
    if ((v & 0x7fffu) > 0x7c00u) add_unique(ps.f16, ps.n16, uint16_t(v));
    if ((v & 0x7fffu) > 0x7f80u) add_unique(ps.bf16, ps.nbf16, uint16_t(v));
  }
}

void validate(const DispatchOptions& o) {
  auto dims_ok = [](Dim3 d) { return d.x > 0 && d.y > 0 && d.z > 0; };
  if (!dims_ok(o.threadgroups) || !dims_ok(o.threads_per_threadgroup))
    throw std::invalid_argument(fmt::format("mtlsim: kernel '{}': empty grid or threadgroup", o.kernel_name));
  if (o.threads_per_threadgroup.volume() > Worker::kMaxThreads)
    throw std::invalid_argument(fmt::format("mtlsim: kernel '{}': {} threads per threadgroup; Metal allows at most {}",
                                            o.kernel_name, o.threads_per_threadgroup.volume(), Worker::kMaxThreads));
  for (uint64_t g : o.only_threadgroups) {
    if (g >= o.threadgroups.volume())
      throw std::invalid_argument(fmt::format("mtlsim: kernel '{}': threadgroup {} is outside the grid of {}", o.kernel_name,
                                              g, o.threadgroups.volume()));
  }
}
}  // namespace

DispatchJob::DispatchJob(const DispatchOptions& o, KernelThreadFn f, void* u)
    : opts(o), fn(f), group_fn(o.exec == ExecPath::automatic && !o.detect_races ? o.group_fn : nullptr), user(u), total_threadgroups(o.only_threadgroups.empty() ? o.threadgroups.volume() : o.only_threadgroups.size()), sink(o.max_issues) {
  add_pattern(poison, poison_pattern_f32());
  add_pattern(poison, poison_pattern_f16());
  add_pattern(poison, poison_pattern_bf16());
  size_t offset = 0;
  for (const ThreadgroupArraySpec& a : o.threadgroup_arrays) {
    const std::vector<uint8_t> pattern = a.poison.empty() ? poison_pattern_f32() : a.poison;
    add_pattern(poison, pattern);
    array_offsets.push_back(offset);
    poisoned_image.resize(offset + a.bytes);
    for (size_t i = 0; i < a.bytes; ++i) poisoned_image[offset + i] = pattern[i % pattern.size()];
    offset = (offset + a.bytes + 15) & ~size_t(15);  // Metal aligns threadgroup arrays to 16
  }
  array_bytes = offset;
  if (offset > 64 * 1024)
    throw std::invalid_argument(fmt::format("mtlsim: kernel '{}': {} bytes of threadgroup memory", o.kernel_name, offset));
  poisoned_image.resize(std::max<size_t>(offset, 1));
}

namespace {
// Persistent helper threads; each keeps its Worker (stacks, sigaltstack) across dispatches.
class WorkerPool {
 public:
  ~WorkerPool() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  // Runs `job` on the calling thread and `helpers` pool threads; returns when all are done.
  void run(DispatchJob& job, int helpers) {
    {
      std::lock_guard lock(mutex_);
      while (int(threads_.size()) < helpers) {
        const int id = int(threads_.size());
        threads_.emplace_back([this, id] { serve(id); });
      }
      job_ = &job;
      wanted_ = helpers;
      remaining_ = helpers;
      ++generation_;
    }
    wake_.notify_all();
    detail::this_thread_worker().run(job);
    std::unique_lock lock(mutex_);
    finished_.wait(lock, [this] { return remaining_ == 0; });
    job_ = nullptr;
  }

 private:
  void serve(int id) {
    uint64_t seen = 0;
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (id >= wanted_) continue;
      DispatchJob* job = job_;
      lock.unlock();
      detail::this_thread_worker().run(*job);
      lock.lock();
      if (--remaining_ == 0) finished_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_, finished_;
  std::vector<std::thread> threads_;
  DispatchJob* job_ = nullptr;
  uint64_t generation_ = 0;
  int wanted_ = 0, remaining_ = 0;
  bool stop_ = false;
};

WorkerPool& pool() {
  static WorkerPool p;
  return p;
}
}  // namespace
}  // namespace detail

DispatchResult dispatch(const DispatchOptions& options, KernelThreadFn fn, void* user) {
  detail::validate(options);
  static std::mutex one_dispatch_at_a_time;
  std::lock_guard lock(one_dispatch_at_a_time);
  detail::DispatchJob job(options, fn, user);
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  uint64_t workers = std::min<uint64_t>(options.workers > 0 ? options.workers : cores, job.total_threadgroups);
  if (options.detect_races) {
    job.race = std::make_unique<detail::RaceDetector>(options, reinterpret_cast<const void*>(fn));
    workers = 1;  // the detector's shadow state is not locked
  }
  detail::pool().run(job, int(workers) - 1);
  DispatchResult result;
  job.sink.take(result);
  if (job.race) job.race->finish(result);
  result.fiber_switches = job.fiber_switches;
  result.threadgroups_run = job.threadgroups_run;
  result.threadgroups_as_loops = job.threadgroups_as_loops;
  return result;
}

}  // namespace mtlsim
