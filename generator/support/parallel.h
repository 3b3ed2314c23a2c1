#pragma once
// One way to spread independent work over threads, for the compiles and runs of verify, report's
// counters and the CUDA back end (each spends its time in a child process: g++, nvcc, a case).
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <type_traits>
#include <vector>

namespace mtlgen::support {

// `requested` threads, or one per core when it is 0 or less.
inline int job_count(int requested) {
  return requested > 0 ? requested : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// Runs work(i) for i in [0, count), `jobs` at a time (job_count(jobs) threads, the caller's among
// them), in increasing order of i. When work returns bool, false stops further items from starting;
// those already started finish, so every item before the one that said stop has run.
template <class Work>
void parallel_for(size_t count, int jobs, Work work) {
  std::atomic<size_t> next{0};
  std::atomic<bool> stopped{false};
  auto drain = [&] {
    for (size_t i; !stopped && (i = next++) < count;) {
      if constexpr (std::is_same_v<std::invoke_result_t<Work&, size_t>, bool>) {
        if (!work(i)) stopped = true;
      } else {
        work(i);
      }
    }
  };
  const size_t threads_wanted = std::min<size_t>(static_cast<size_t>(job_count(jobs)), count);
  std::vector<std::thread> threads;
  for (size_t t = 1; t < threads_wanted; ++t) threads.emplace_back(drain);
  drain();
  for (auto& t : threads) t.join();
}

}  // namespace mtlgen::support
