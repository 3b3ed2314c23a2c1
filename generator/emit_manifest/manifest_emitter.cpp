#include "emit_manifest/manifest_emitter.h"

#include <fmt/format.h>

#include <stdexcept>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

#include "emit_common/emitter.h"
#include "support/version.h"

namespace mtlgen::emit {

namespace {

using Json = nlohmann::ordered_json;

std::string spec_type(const ir::TypeRef& t) { return t.concrete ? ir::info(*t.concrete).spec_name : t.param; }

Json sources(const std::vector<expr::Expr>& exprs) {
  Json list = Json::array();
  for (const auto& e : exprs) list.push_back(expr::to_source(e));
  return list;
}

// A spec value of `type`: a bool, an integer, or a number; non-finite floats as "nan" / "inf" /
// "-inf" because JSON has no spelling for them.
Json typed_value(ir::ScalarType type, double value) {
  if (type == ir::ScalarType::boolean) return value != 0;
  if (!ir::info(type).is_float) return static_cast<int64_t>(value);
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return value;
}

class ManifestWriter {
 public:
  ManifestWriter(const ir::Kernel& k, const std::vector<std::string>& files) : k_(k), files_(files) {}

  Json run() const {
    Json j;
    j["name"] = k_.name;
    j["summary"] = k_.summary;
    j["spec"] = {{"path", k_.spec_path}, {"hash", k_.spec_hash}};
    j["msl_version"] = k_.msl_version;
    j["type_params"] = type_params();
    j["dims"] = dims();
    j["preconditions"] = preconditions();
    j["tunables"] = tunables();
    j["buffers"] = buffers();
    j["scalars"] = scalars();
    j["function_constants"] = function_constants();
    j["threadgroup_arrays"] = threadgroup_arrays();
    j["params_struct"] = params_struct();
    j["bindings"] = bindings();
    j["dispatch"] = {{"threadgroups", sources(k_.dispatch.threadgroups)},
                     {"threads_per_threadgroup", sources(k_.dispatch.threads_per_threadgroup)}};
    // Chosen per problem: the variants list their maximum, not a shape.
    if (k_.dispatch.threads_from_dims) j["dispatch"]["max_threads_per_threadgroup"] = expr::to_source(*k_.dispatch.max_threads);
    j["variants"] = variants();
    j["cost"] = cost();
    if (!k_.family_name.empty()) j["family"] = k_.family_name;
    j["files"] = files_;
    return j;
  }

  // The sections, also those a family's entry shares with a kernel's.
  Json type_params() const {
    Json list = Json::array();
    for (const auto& t : k_.type_params) {
      Json types = Json::array();
      for (auto type : t.types) types.push_back(ir::info(type).spec_name);
      list.push_back({{"name", t.name}, {"types", types}, {"default", ir::info(t.types.front()).spec_name}});
    }
    return list;
  }

  Json dims() const {
    Json list = Json::array();
    for (const auto& d : k_.dims) {
      list.push_back({{"name", d.name}, {"min", d.min}, {"max", d.max ? Json(*d.max) : Json(nullptr)},
                      {"multiple_of", d.multiple_of}, {"doc", d.doc}});
    }
    return list;
  }

  Json preconditions() const {
    Json list = Json::array();
    // per_variant: the check names a tunable or sizeof(type parameter), so it holds or fails per
    // variant; a tool choosing a tuning for a shape must evaluate it with that tuning.
    for (const auto& p : k_.preconditions) {
      list.push_back({{"check", expr::to_source(p.check)}, {"message", p.message}, {"per_variant", p.per_variant}});
    }
    return list;
  }

  Json tunables() const {
    Json list = Json::array();
    for (const auto& t : k_.tunables) {
      list.push_back({{"name", t.name}, {"values", t.values}, {"default", t.default_value}, {"doc", t.doc}});
    }
    return list;
  }

  Json buffers() const {
    Json list = Json::array();
    for (const auto& b : k_.buffers) {
      list.push_back({{"name", b.name}, {"type", spec_type(b.type)}, {"shape", sources(b.shape)},
                      {"access", ir::to_string(b.access)}, {"host_visible", b.host_visible}, {"index", b.index},
                      {"doc", b.doc}});
    }
    return list;
  }

  Json scalars() const {
    Json list = Json::array();
    for (const auto& s : k_.scalars) {
      list.push_back({{"name", s.name}, {"type", ir::info(s.type).spec_name},
                      {"default", typed_value(s.type, s.default_value)}, {"doc", s.doc}});
    }
    return list;
  }

  Json function_constants() const {
    Json list = Json::array();
    for (const auto& f : k_.function_constants) {
      list.push_back({{"name", f.name}, {"type", ir::info(f.type).spec_name}, {"index", f.index},
                      {"default", typed_value(f.type, f.default_value)}, {"doc", f.doc}});
    }
    return list;
  }

  Json threadgroup_arrays() const {
    Json list = Json::array();
    for (const auto& a : k_.threadgroup_arrays) {
      list.push_back({{"name", a.name}, {"type", spec_type(a.type)}, {"count", expr::to_source(a.count)},
                      {"index", a.index}});
    }
    return list;
  }

  Json params_struct() const {
    Json fields = Json::array();
    for (const auto& f : k_.params_fields) {
      fields.push_back({{"name", f.name}, {"type", ir::info(f.type).spec_name}, {"from", f.is_dim ? "dims" : "scalars"}});
    }
    return {{"name", k_.params_struct_name()}, {"index", k_.params_index}, {"size", 4 * k_.params_fields.size()},
            {"fields", fields}};
  }

  // The kernel's parameters in declaration order, as [[buffer(i)]], [[threadgroup(i)]] or a builtin.
  Json bindings() const {
    Json list = Json::array();
    for (const auto& p : k_.params) {
      switch (p.kind) {
        case ir::KernelParam::Kind::buffer:
          list.push_back({{"kind", "buffer"}, {"name", k_.buffers[p.ref].name}, {"index", p.index}});
          break;
        case ir::KernelParam::Kind::params:
          list.push_back({{"kind", "params"}, {"name", "params"}, {"index", p.index}});
          break;
        case ir::KernelParam::Kind::threadgroup_array:
          list.push_back({{"kind", "threadgroup_array"}, {"name", k_.threadgroup_arrays[p.ref].name}, {"index", p.index}});
          break;
        case ir::KernelParam::Kind::builtin:
          list.push_back({{"kind", "builtin"}, {"name", ir::info(p.builtin).name},
                          {"attribute", ir::info(p.builtin).attribute},
                          {"type", ir::builtin_msl_type(p.builtin, k_.dispatch.rank())}});
          break;
        // Only a hand-written kernel's Variant::source_params bind these; k.params never holds them.
        case ir::KernelParam::Kind::argument:
        case ir::KernelParam::Kind::unbound:
          throw std::logic_error("a generated kernel's binding table holds an argument or unbound parameter");
      }
    }
    return list;
  }

  Json variants() const {
    Json list = Json::array();
    for (const auto& v : k_.variants) {
      Json types = Json::object(), tunables = Json::object(), memory = Json::object();
      for (const auto& t : k_.type_params) types[t.name] = ir::info(v.types.at(t.name)).spec_name;
      for (const auto& t : k_.tunables) tunables[t.name] = v.tunables.at(t.name);
      for (size_t i = 0; i < k_.threadgroup_arrays.size(); ++i) {
        memory[k_.threadgroup_arrays[i].name] = (v.threadgroup_array_bytes.at(i) + 15) / 16 * 16;
      }
      for (size_t i = 0; i < k_.body_threadgroup_variables.size(); ++i) {
        memory[k_.body_threadgroup_variables[i].name] = (v.body_threadgroup_bytes.at(i) + 15) / 16 * 16;
      }
      list.push_back({{"entry_point", v.entry_point}, {"types", types}, {"tunables", tunables},
                      {"threads_per_threadgroup", k_.dispatch.threads_from_dims ? Json(nullptr)
                                                                                : Json(v.threadgroup_shape)},
                      {"max_total_threads_per_threadgroup", v.threads_per_threadgroup},
                      {"threadgroup_memory_bytes", memory}, {"default", v.is_default_tuning}});
    }
    return list;
  }

  Json cost() const {
    auto formula = [](const std::optional<expr::Expr>& e) { return e ? Json(expr::to_source(*e)) : Json(nullptr); };
    Json j = {{"bytes_read", formula(k_.cost.bytes_read)},
              {"bytes_written", formula(k_.cost.bytes_written)},
              {"flops", formula(k_.cost.flops)}};
    // `extra` only where the spec names quantities, so other kernels' entries keep their shape.
    for (const auto& q : k_.cost.extra) {
      j["extra"][q.name] = {{"formula", expr::to_source(q.value)}, {"doc", q.doc}};
    }
    return j;
  }


 private:
  const ir::Kernel& k_;
  const std::vector<std::string>& files_;
};

// A kernel family: its own dims, buffers (intermediates with their shapes) and variants, then its
// kernels in dispatch order with every binding of each dispatch. The kernels themselves are listed
// as kernels of their own, each naming the family.
class FamilyManifestWriter {
 public:
  FamilyManifestWriter(const ir::Kernel& k, const std::vector<std::string>& files) : k_(k), f_(*k.family), files_(files) {}

  Json run() const {
    Json j;
    j["name"] = k_.name;
    j["summary"] = k_.summary;
    j["spec"] = {{"path", k_.spec_path}, {"hash", k_.spec_hash}};
    j["msl_version"] = k_.msl_version;
    j["type_params"] = ManifestWriter(k_, files_).type_params();
    j["dims"] = ManifestWriter(k_, files_).dims();
    j["preconditions"] = ManifestWriter(k_, files_).preconditions();
    j["buffers"] = buffers();
    j["scalars"] = ManifestWriter(k_, files_).scalars();
    j["kernels"] = kernels();
    j["dispatches"] = dispatches();
    j["variants"] = variants();
    j["cost"] = ManifestWriter(k_, files_).cost();
    j["files"] = files_;
    return j;
  }

 private:
  // Intermediates are GPU-only scratch the dispatches write and read; their shapes size them.
  Json buffers() const {
    Json list = Json::array();
    for (const auto& b : k_.buffers) {
      Json item = {{"name", b.name}, {"type", spec_type(b.type)}, {"shape", sources(b.shape)}};
      if (b.intermediate) {
        item["intermediate"] = true;
      } else {
        item["access"] = ir::to_string(b.access);
      }
      item["host_visible"] = b.host_visible;
      item["doc"] = b.doc;
      list.push_back(item);
    }
    return list;
  }

  Json kernels() const {
    Json list = Json::array();
    for (const auto& d : f_.dispatches) list.push_back(d.kernel);
    return list;
  }

  // Each dispatch's member names bound to the family's: dims to expressions of the family's dims.
  Json dispatches() const {
    Json list = Json::array();
    for (const auto& d : f_.dispatches) {
      Json dims = Json::object(), buffers = Json::object(), scalars = Json::object(), types = Json::object();
      for (const auto& b : d.dims) dims[b.member] = expr::to_source(b.value);
      for (const auto& b : d.buffers) buffers[b.member] = b.family;
      for (const auto& b : d.scalars) scalars[b.member] = b.family;
      for (const auto& b : d.types) types[b.member] = b.family;
      list.push_back({{"kernel", d.kernel}, {"dims", dims}, {"buffers", buffers}, {"scalars", scalars}, {"types", types}});
    }
    return list;
  }

  // One per type choice, with the variant each dispatch runs at its kernel's default tuning.
  Json variants() const {
    Json list = Json::array();
    for (const auto& v : k_.variants) {
      Json types = Json::object(), entry_points = Json::array();
      for (const auto& t : k_.type_params) types[t.name] = ir::info(v.types.at(t.name)).spec_name;
      for (const auto& d : f_.dispatches) {
        entry_points.push_back(f_.kernel_of(d).default_variant_for(f_.member_types(d, v)).entry_point);
      }
      list.push_back({{"types", types}, {"default_entry_points", entry_points}});
    }
    return list;
  }

  const ir::Kernel& k_;
  const ir::Family& f_;
  const std::vector<std::string>& files_;
};

}  // namespace

GeneratedFiles generated_files(const std::vector<ir::Kernel>& kernels) {
  return files_in(generate_all(kernels), kernels);
}

std::string manifest_json(const std::vector<ir::Kernel>& kernels, const GeneratedFiles& files) {
  Json j;
  j["generated_by"] = fmt::format("mtlgen {}", kVersion);
  j["do_not_edit"] = "Generated from the specs named below: change a spec and run `mtlgen generate`.";
  j["mtlgen_version"] = kVersion;
  j["library_files"] = files.library;
  j["kernels"] = Json::array();
  j["families"] = Json::array();
  for (const auto& k : kernels) {
    const auto& own = files.per_kernel.at(k.name);
    if (k.is_family()) {
      j["families"].push_back(FamilyManifestWriter(k, own).run());
    } else {
      j["kernels"].push_back(ManifestWriter(k, own).run());
    }
  }
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

GeneratedFiles files_in(const support::OutputSet& out, const std::vector<ir::Kernel>& kernels) {
  GeneratedFiles files;
  for (const auto& k : kernels) files.per_kernel[k.name];
  for (const auto& [path, content] : out.files()) {
    auto slash = path.find('/');
    auto kernel = slash == std::string::npos ? files.per_kernel.end() : files.per_kernel.find(path.substr(0, slash));
    (kernel != files.per_kernel.end() ? kernel->second : files.library).push_back(path);
  }
  files.library.push_back(kManifestPath);
  std::sort(files.library.begin(), files.library.end());
  return files;
}

void emit_manifest(const std::vector<ir::Kernel>& kernels, support::OutputSet& out) {
  out.add(kManifestPath, manifest_json(kernels, files_in(out, kernels)));
}

}  // namespace mtlgen::emit
