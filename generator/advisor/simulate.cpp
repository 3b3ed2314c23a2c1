#include "advisor/simulate.h"

#include <map>
#include <memory>
#include <mutex>

#include "support/parallel.h"
#include "verify/access_counts.h"

namespace mtlgen::advisor {

namespace {

// Access-counted modules by kernel name and entry point: each holds only the variant it counts,
// which for a kernel of dozens of tune points is most of its compile time saved.
using Modules = std::map<std::pair<std::string, std::string>, std::unique_ptr<verify::SimModule>>;

verify::ModuleOptions for_variant(verify::ModuleOptions options, const ir::Variant& v) {
  options.entry_points = {v.entry_point};
  return options;
}

// Compiles the module of each kernel's counted variant `jobs` at a time (a cold cache spends
// nearly all its time in g++).
void build_modules(const std::vector<ir::Kernel>& kernels, const verify::ModuleOptions& options, int jobs,
                   Modules& modules) {
  std::mutex mutex;
  support::parallel_for(kernels.size(), jobs, [&](size_t i) {
    const ir::Kernel& k = kernels[i];
    if (k.is_family()) return;
    const ir::Variant& v = counted_variant(k);
    std::unique_ptr<verify::SimModule> built;
    try {
      built = std::make_unique<verify::SimModule>(k, for_variant(options, v));
    } catch (const std::exception&) {
      return;  // reported when the kernel is counted
    }
    std::lock_guard lock(mutex);
    modules[{k.name, v.entry_point}] = std::move(built);
  });
}

}  // namespace

CountFn simulator_counter(verify::ModuleOptions options, double timeout_seconds, const std::vector<ir::Kernel>& kernels,
                          int jobs) {
  options.access_counted = true;
  auto modules = std::make_shared<Modules>();  // kept for the counter's life
  build_modules(kernels, options, jobs, *modules);
  return [options, timeout_seconds, modules](const ir::Kernel& k, const ir::Variant& v, const ir::TestCase& t) {
    auto& module = (*modules)[{k.name, v.entry_point}];
    if (!module) module = std::make_unique<verify::SimModule>(k, for_variant(options, v));
    return verify::count_case(k, v, t, *module, timeout_seconds);
  };
}

}  // namespace mtlgen::advisor
