#include "spec/binding_table.h"

namespace mtlgen::spec {

namespace {

void add_param(ir::Kernel& k, ir::KernelParam::Kind kind, size_t ref, int index, ir::Builtin builtin = {}) {
  ir::KernelParam p;
  p.kind = kind;
  p.ref = ref;
  p.index = index;
  p.builtin = builtin;
  k.params.push_back(p);
}

}  // namespace

void build_binding_table(ir::Kernel& k) {
  using Kind = ir::KernelParam::Kind;
  // The reference sees dims and scalars the same way for every kernel; a hand-written kernel's
  // own parameters are bound per variant (Variant::source_params).
  for (const auto& d : k.dims) k.params_fields.push_back({d.name, ir::ScalarType::u32, true});
  for (const auto& s : k.scalars) k.params_fields.push_back({s.name, s.type, false});
  if (k.is_source() || k.is_family()) return;
  for (size_t i = 0; i < k.buffers.size(); ++i) add_param(k, Kind::buffer, i, k.buffers[i].index);
  add_param(k, Kind::params, 0, k.params_index);
  for (size_t i = 0; i < k.threadgroup_arrays.size(); ++i) {
    k.threadgroup_arrays[i].index = static_cast<int>(i);
    add_param(k, Kind::threadgroup_array, i, static_cast<int>(i));
  }
  for (auto b : k.builtins_used) add_param(k, Kind::builtin, 0, 0, b);
}

}  // namespace mtlgen::spec
