#include "advisor/simulate.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "verify/access_counts.h"

namespace mtlgen::advisor {

namespace {

using Modules = std::map<std::string, std::unique_ptr<verify::SimModule>>;

// Compiles the modules `jobs` at a time (a cold cache spends nearly all its time in g++).
void build_modules(const std::vector<ir::Kernel>& kernels, const verify::ModuleOptions& options, int jobs,
                   Modules& modules) {
  std::mutex mutex;
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < kernels.size();) {
      if (kernels[i].is_family()) continue;
      std::unique_ptr<verify::SimModule> built;
      try {
        built = std::make_unique<verify::SimModule>(kernels[i], options);
      } catch (const std::exception&) {
        continue;  // reported when the kernel is counted
      }
      std::lock_guard lock(mutex);
      modules[kernels[i].name] = std::move(built);
    }
  };
  const unsigned n = jobs > 0 ? unsigned(jobs) : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < n; ++t) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
}

}  // namespace

CountFn simulator_counter(verify::ModuleOptions options, double timeout_seconds, const std::vector<ir::Kernel>& kernels,
                          int jobs) {
  options.access_counted = true;
  auto modules = std::make_shared<Modules>();  // by kernel name, kept for the counter's life
  build_modules(kernels, options, jobs, *modules);
  return [options, timeout_seconds, modules](const ir::Kernel& k, const ir::Variant& v, const ir::TestCase& t) {
    auto& module = (*modules)[k.name];
    if (!module) module = std::make_unique<verify::SimModule>(k, options);
    return verify::count_case(k, v, t, *module, timeout_seconds);
  };
}

}  // namespace mtlgen::advisor
