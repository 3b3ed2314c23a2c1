#include "verify/dispatch_setup.h"

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

}  // namespace

std::vector<uint8_t> params_bytes(const ir::Kernel& kernel, const std::map<std::string, int64_t>& dims,
                                  const ScalarValue& scalar) {
  std::vector<uint8_t> blob;
  for (const auto& f : kernel.params_fields) {
    uint8_t bytes[4];
    if (f.is_dim) {
      store_element(ir::ScalarType::u32, bytes, 0, static_cast<double>(static_cast<uint32_t>(dims.at(f.name))));
    } else {
      store_element(f.type, bytes, 0, scalar(f.name));
    }
    blob.insert(blob.end(), bytes, bytes + 4);
  }
  return blob;
}

mtlsim::DispatchOptions dispatch_options(const ir::Kernel& k, const ir::Variant& v, const expr::Env& env,
                                         const RunSpec& run, uint64_t order_seed, int workers) {
  mtlsim::DispatchOptions o;
  uint32_t* grid[3] = {&o.threadgroups.x, &o.threadgroups.y, &o.threadgroups.z};
  uint32_t* tg[3] = {&o.threads_per_threadgroup.x, &o.threads_per_threadgroup.y, &o.threads_per_threadgroup.z};
  const std::vector<int64_t> shape = k.threadgroup_shape(v, env);  // per problem where it depends on the dims
  for (int axis = 0; axis < k.dispatch.rank(); ++axis) {
    *grid[axis] = static_cast<uint32_t>(expr::evaluate(k.dispatch.threadgroups[axis], env));
    *tg[axis] = static_cast<uint32_t>(shape[axis]);
  }
  for (size_t i = 0; i < k.threadgroup_arrays.size(); ++i) {
    const ir::ThreadgroupArray& a = k.threadgroup_arrays[i];
    mtlsim::ThreadgroupArraySpec spec;
    spec.bytes = static_cast<size_t>(v.threadgroup_array_bytes[i]);
    spec.poison = run.zeroed_threadgroup_memory ? std::vector<uint8_t>{0} : tg_poison(a.type.resolve(v.types));
    spec.name = a.name;
    spec.element_size = static_cast<size_t>(ir::info(a.type.resolve(v.types)).size);
    o.threadgroup_arrays.push_back(std::move(spec));
  }
  o.zero_threadgroup_variables = run.zeroed_threadgroup_memory;  // `threadgroup` arrays declared in bodies
  o.order = run.order;
  o.seed = order_seed;
  o.workers = workers;
  o.kernel_name = v.entry_point;
  o.kernel_function = kernel_function(k, v);
  return o;
}

}  // namespace mtlgen::verify
