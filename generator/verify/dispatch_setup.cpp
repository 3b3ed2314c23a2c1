#include "verify/dispatch_setup.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "mtlgen_testdata.h"
#include "verify/elements.h"

namespace mtlgen::verify {

namespace {

std::vector<uint8_t> tg_poison(ir::ScalarType t) {
  if (t == ir::ScalarType::f16) return mtlsim::poison_pattern_f16();
  if (t == ir::ScalarType::bf16) return mtlsim::poison_pattern_bf16();
  return mtlsim::poison_pattern_f32();
}

// The kernel's function as `__func__` names it: `ns::rms<float, 4>` is `rms`.
std::string kernel_function(const ir::Kernel& k, const ir::Variant& v) {
  if (!k.is_source()) return k.name;
  std::string call = v.source_call.substr(0, v.source_call.find('<'));
  size_t colon = call.rfind("::");
  return colon == std::string::npos ? call : call.substr(colon + 2);
}

std::string triple(const uint64_t* v) { return fmt::format("({}, {}, {})", v[0], v[1], v[2]); }

// Where the host description's dispatch differs from what the spec says (empty when nowhere).
// A kernel of rank < 3 has 1 on the axes it lacks.
std::string host_disagreement(const ir::Kernel& k, const ir::Variant& v, const expr::Env& env,
                              const mtlsim::HostDispatch& host) {
  uint64_t grid[3] = {1, 1, 1}, threads[3] = {1, 1, 1};
  const std::vector<int64_t> shape = k.threadgroup_shape(v, env);
  for (int axis = 0; axis < k.dispatch.rank(); ++axis) {
    grid[axis] = static_cast<uint64_t>(expr::evaluate(k.dispatch.threadgroups[axis], env));
    threads[axis] = static_cast<uint64_t>(shape[axis]);
  }
  std::vector<std::string> problems;
  if (!std::equal(grid, grid + 3, host.threadgroups)) {
    problems.push_back(fmt::format("threadgroups() gives {} where the spec's dispatch gives {}", triple(host.threadgroups), triple(grid)));
  }
  if (!std::equal(threads, threads + 3, host.threads_per_threadgroup)) {
    problems.push_back(fmt::format("threads_per_threadgroup() gives {} where the spec gives {}",
                                   triple(host.threads_per_threadgroup), triple(threads)));
  }
  for (size_t i = 0; i < k.threadgroup_arrays.size(); ++i) {
    if (host.threadgroup_memory_bytes[i] == static_cast<uint64_t>(v.threadgroup_array_bytes[i])) continue;
    problems.push_back(fmt::format("threadgroup_memory_bytes({}) (`{}`) gives {} where the spec gives {}", i,
                                   k.threadgroup_arrays[i].name, host.threadgroup_memory_bytes[i], v.threadgroup_array_bytes[i]));
  }
  if (v.entry_point != host.entry_point) {
    problems.push_back(fmt::format("entry_point() gives `{}` where the variant is `{}`", host.entry_point, v.entry_point));
  }
  for (size_t i = 0; i < k.buffers.size() && static_cast<int>(i) < host.buffers; ++i) {
    const int64_t elements = k.buffers[i].elements(env);
    if (host.buffer_elements[i] == elements) continue;
    problems.push_back(fmt::format("{}_elements() gives {} where the spec's shape gives {}", k.buffers[i].name,
                                   host.buffer_elements[i], elements));
  }
  if (problems.empty()) return "";
  return fmt::format("the glue's dispatch code in {}_types.h disagrees with the spec for {}: {}", k.name, v.entry_point,
                     fmt::join(problems, "; "));
}

}  // namespace

std::vector<uint64_t> dims_values(const ir::Kernel& kernel, const std::map<std::string, int64_t>& dims) {
  std::vector<uint64_t> values;
  for (const auto& d : kernel.dims) values.push_back(static_cast<uint64_t>(dims.at(d.name)));
  return values;
}

std::vector<double> scalar_values(const ir::Kernel& kernel, const ScalarValue& scalar) {
  std::vector<double> values;
  for (const auto& s : kernel.scalars) values.push_back(scalar(s.name));
  return values;
}

std::string describe_host_dispatch(const LoadedModule& module, const ir::Kernel& k, const ir::Variant& v,
                                   const std::map<std::string, int64_t>& dims, const ScalarValue& scalar,
                                   mtlsim::HostDispatch& out) {
  const std::vector<uint64_t> dim_array = dims_values(k, dims);
  const std::vector<double> scalar_array = scalar_values(k, scalar);
  const int variant = static_cast<int>(&v - k.variants.data());
  if (module.host_dispatch_fn()(variant, dim_array.data(), scalar_array.data(), &out) != 0) {
    out.error[sizeof out.error - 1] = '\0';
    return fmt::format("check_dims in {}_types.h refuses dims the spec accepts: {}", k.name, out.error);
  }
  out.entry_point[sizeof out.entry_point - 1] = '\0';
  return host_disagreement(k, v, ir::Kernel::env_for(dims, v), out);
}

std::vector<uint64_t> sample_threadgroups(const mtlsim::HostDispatch& host, uint64_t count, uint64_t seed) {
  const uint64_t total = host.threadgroups[0] * host.threadgroups[1] * host.threadgroups[2];
  if (count == 0 || total <= count) return {};
  std::set<uint64_t> chosen{0, total - 1};
  uint64_t state = seed;  // SplitMix64 steps: the same sample for the same seed everywhere
  while (chosen.size() < count) chosen.insert(testdata::splitmix64(state) % total);
  return {chosen.begin(), chosen.end()};
}

std::vector<uint8_t> params_bytes(const mtlsim::HostDispatch& host) {
  return std::vector<uint8_t>(host.params, host.params + host.params_size);
}

std::vector<void*> launcher_slots(const ir::Kernel& k, const ir::Variant& v, const std::vector<void*>& buffers,
                                  void* params, const std::vector<void*>& arguments) {
  std::vector<void*> slots;
  if (!k.is_source()) {
    slots = buffers;
    slots.push_back(params);
    slots.insert(slots.end(), arguments.begin(), arguments.end());
    return slots;
  }
  using Kind = ir::KernelParam::Kind;
  for (const ir::KernelParam& p : v.source_params) {
    if (p.kind != Kind::buffer && p.kind != Kind::argument && p.kind != Kind::unbound) continue;
    if (slots.size() <= static_cast<size_t>(p.index)) slots.resize(static_cast<size_t>(p.index) + 1, nullptr);
    if (p.kind != Kind::unbound) slots[static_cast<size_t>(p.index)] = (p.kind == Kind::buffer ? buffers : arguments).at(p.ref);
  }
  return slots;
}

namespace {

// A hand-written kernel's object takes threadgroup memory by [[threadgroup(n)]]: the spec's arrays
// (`spec_order`) moved to the indices of the parameters bound to them.
std::vector<mtlsim::ThreadgroupArraySpec> by_threadgroup_index(const ir::Variant& v,
                                                               const std::vector<mtlsim::ThreadgroupArraySpec>& spec_order) {
  std::vector<mtlsim::ThreadgroupArraySpec> out;
  for (const ir::KernelParam& p : v.source_params) {
    if (p.kind != ir::KernelParam::Kind::threadgroup_array) continue;
    if (out.size() <= static_cast<size_t>(p.index)) out.resize(static_cast<size_t>(p.index) + 1);
    out[static_cast<size_t>(p.index)] = spec_order.at(p.ref);
  }
  return out;
}

}  // namespace

mtlsim::DispatchOptions dispatch_options(const ir::Kernel& k, const ir::Variant& v, const mtlsim::HostDispatch& host,
                                         const RunSpec& run, uint64_t order_seed, int workers) {
  mtlsim::DispatchOptions o;
  uint32_t* grid[3] = {&o.threadgroups.x, &o.threadgroups.y, &o.threadgroups.z};
  uint32_t* tg[3] = {&o.threads_per_threadgroup.x, &o.threads_per_threadgroup.y, &o.threads_per_threadgroup.z};
  for (int axis = 0; axis < 3; ++axis) {
    *grid[axis] = static_cast<uint32_t>(host.threadgroups[axis]);
    *tg[axis] = static_cast<uint32_t>(host.threads_per_threadgroup[axis]);
  }
  for (size_t i = 0; i < k.threadgroup_arrays.size(); ++i) {
    const ir::ThreadgroupArray& a = k.threadgroup_arrays[i];
    mtlsim::ThreadgroupArraySpec spec;
    spec.bytes = static_cast<size_t>(host.threadgroup_memory_bytes[i]);
    spec.poison = run.zeroed_threadgroup_memory ? std::vector<uint8_t>{0} : tg_poison(a.type.resolve(v.types));
    spec.name = a.name;
    spec.element_size = static_cast<size_t>(ir::info(a.type.resolve(v.types)).size);
    o.threadgroup_arrays.push_back(std::move(spec));
  }
  if (k.is_source()) o.threadgroup_arrays = by_threadgroup_index(v, o.threadgroup_arrays);
  o.zero_threadgroup_variables = run.zeroed_threadgroup_memory;  // `threadgroup` arrays declared in bodies
  o.order = run.order;
  o.seed = order_seed;
  o.workers = workers;
  o.kernel_name = v.entry_point;
  o.kernel_function = kernel_function(k, v);
  return o;
}

}  // namespace mtlgen::verify
