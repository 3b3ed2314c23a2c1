#include "advisor/simulate.h"

#include <map>
#include <memory>

#include "verify/access_counts.h"

namespace mtlgen::advisor {

CountFn simulator_counter(verify::ModuleOptions options, double timeout_seconds) {
  options.access_counted = true;
  // Modules by kernel name, kept for the counter's life: one compile per kernel.
  auto modules = std::make_shared<std::map<std::string, std::unique_ptr<verify::SimModule>>>();
  return [options, timeout_seconds, modules](const ir::Kernel& k, const ir::Variant& v, const ir::TestCase& t) {
    auto& module = (*modules)[k.name];
    if (!module) module = std::make_unique<verify::SimModule>(k, options);
    return verify::count_case(k, v, t, *module, timeout_seconds);
  };
}

}  // namespace mtlgen::advisor
