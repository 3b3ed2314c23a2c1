#include "cuda/cuda_emitter.h"

#include <fmt/format.h>

#include <filesystem>
#include <set>
#include <stdexcept>
#include <vector>

#include "emit_common/launch_args.h"
#include "emit_msl/msl_emitter.h"
#include "emit_sim/sim_emitter.h"
#include "msl/msl_unit.h"
#include "support/diagnostics.h"
#include "support/embedded_files.h"
#include "support/templates.h"

namespace mtlgen::support {
const std::vector<EmbeddedFile>& mtlgen_cuda_files();  // the CUDA shim, embedded by CMake
}

namespace mtlgen::emit {

using support::TemplateData;

namespace {

std::string builtin_arg(const std::string& type, ir::Builtin b) {
  return fmt::format("mtlcu::as_builtin<{}>(mtlcu::{}())", cuda_type_name(type), ir::info(b).attribute);
}

// The arguments of a generated kernel, from its binding table (the simulator launcher's order).
std::vector<std::string> generated_args(const ir::Kernel& k, const ir::Variant& v) {
  const LaunchArgSpelling cuda{
      .params_qualifier = "const ",
      .threadgroup_array =
          [](const std::string& type, size_t i) {
            return fmt::format("static_cast<{}*>(mtlcu::threadgroup_array(s, {}))", type, i);
          },
      .builtin = [](ir::Builtin b, const std::string& msl_type) { return builtin_arg(msl_type, b); },
  };
  return generated_launch_args(k, v, cuda);
}

// The arguments of a hand-written kernel: slots become whatever its parameters declare.
std::vector<std::string> source_args(const ir::Kernel& k, const ir::Variant& v) {
  std::vector<std::string> args;
  for (const auto& p : v.source_params) {
    const char* proxy = p.by_reference ? "mtlcu::AnyReference" : "mtlcu::AnyPointer";
    switch (p.kind) {
      case ir::KernelParam::Kind::buffer: args.push_back(fmt::format("{}{{slot[{}]}}", proxy, p.ref)); break;
      case ir::KernelParam::Kind::argument:
        args.push_back(fmt::format("{}{{slot[{}]}}", proxy, k.buffers.size() + 1 + p.ref));
        break;
      case ir::KernelParam::Kind::threadgroup_array:
        args.push_back(fmt::format("{}{{mtlcu::threadgroup_array(s, {})}}", proxy, p.ref));
        break;
      case ir::KernelParam::Kind::unbound: args.push_back("mtlcu::AnyPointer{nullptr}"); break;
      case ir::KernelParam::Kind::builtin: args.push_back(builtin_arg(p.builtin_type, p.builtin)); break;
      case ir::KernelParam::Kind::params: throw std::logic_error("a hand-written kernel has no generated parameter struct");
    }
  }
  return args;
}

// `argmax<float, 32>`: the kernel's template arguments with tunables, vector names respelled.
std::string generated_call(const ir::Kernel& k, const ir::Variant& v) {
  std::vector<std::string> parts;
  for (const auto& t : k.type_params) parts.push_back(cuda_type_name(ir::info(v.types.at(t.name)).msl));
  for (const auto& t : k.tunables) parts.push_back(std::to_string(v.tunables.at(t.name)));
  return parts.empty() ? k.name : fmt::format("{}<{}>", k.name, fmt::join(parts, ", "));
}

// `static_cast<float>(values[0])`: function constant i from the run's values.
TemplateData constant_assignments(const ir::Kernel& k) {
  TemplateData list{TemplateData::type::list};
  for (size_t i = 0; i < k.function_constants.size(); ++i) {
    const auto& f = k.function_constants[i];
    std::string type = ir::info(f.type).msl;
    std::string value = fmt::format("values[{}]", i);
    if (f.type == ir::ScalarType::boolean) value += " != 0";
    else value = fmt::format("static_cast<{}>(static_cast<float>({}))", type, value);
    TemplateData item;
    item.set("name", f.name);
    item.set("value", value);
    list.push_back(item);
  }
  return list;
}

std::string launcher_source(const ir::Kernel& k) {
  TemplateData variants{TemplateData::type::list};
  for (size_t i = 0; i < k.variants.size(); ++i) {
    const auto& v = k.variants[i];
    std::vector<std::string> args = k.is_source() ? source_args(k, v) : generated_args(k, v);
    for (size_t a = 0; a + 1 < args.size(); ++a) args[a] += ",";
    TemplateData item;
    item.set("index", std::to_string(i));
    item.set("kernel", k.name);
    item.set("entry", v.entry_point);
    item.set("call", k.is_source() ? v.source_call : generated_call(k, v));
    item.set("args", support::string_list(args));
    item.set("max_threads", std::to_string(v.threads_per_threadgroup > 0 ? v.threads_per_threadgroup : 1024));
    variants.push_back(item);
  }
  TemplateData d;
  d.set("kernel", k.name);
  d.set("spec_path", k.spec_path);
  d.set("variants", variants);
  d.set("variant_count", std::to_string(k.variants.size()));
  d.set("constants", constant_assignments(k));
  return support::render_template("cuda/launcher.cu.mustache", d);
}

std::string host_source(const ir::Kernel& k) {
  TemplateData d;
  d.set("kernel", k.name);
  d.set("spec_path", k.spec_path);
  d.set("bridge", sim_bridge_path(k));
  return support::render_template("cuda/host.cpp.mustache", d);
}

// The kernels a program of `k` dispatches: a family's, in Family::kernels order, else `k` itself.
std::vector<const ir::Kernel*> dispatched_kernels(const ir::Kernel& k) {
  std::vector<const ir::Kernel*> out;
  if (!k.is_family()) return {&k};
  for (const auto& member : k.family->kernels) out.push_back(&member);
  return out;
}

std::string modules_source(const ir::Kernel& k) {
  std::vector<std::string> modules, references;
  for (const ir::Kernel* m : dispatched_kernels(k)) modules.push_back(m->name);
  std::set<std::string> seen;
  for (const auto& v : k.variants)
    if (seen.insert(reference_symbol(k, v)).second) references.push_back(reference_symbol(k, v));
  TemplateData d;
  d.set("kernel", k.name);
  d.set("spec_path", k.spec_path);
  d.set("family", k.is_family());
  d.set("modules", support::string_list(modules));
  d.set("module_count", std::to_string(modules.size()));
  d.set("references", support::string_list(references));
  d.set("reference_count", std::to_string(references.size()));
  return support::render_template("cuda/modules.cu.mustache", d);
}

// The kernel's MSL through the front end: the CUDA flavour of the file and its local headers.
void add_cuda_sources(const ir::Kernel& k, support::OutputSet& out) {
  support::Diagnostics diags;
  msl::ParseOptions options;
  options.conformance = false;
  options.require_entry_point = true;
  if (k.is_source()) {
    options.file = k.source->file;
    options.include_dirs.assign(k.source->include_paths.begin(), k.source->include_paths.end());
    std::set<std::string>& needed = options.needed_entry_points.emplace();
    for (const auto& e : k.source->entries) needed.insert(e.host_name);
  } else {
    options.file = k.name + ".metal";
    options.text = msl_source(k);
  }
  msl::Unit unit = msl::parse(options, diags);
  if (diags.has_errors())
    throw std::runtime_error(fmt::format("the MSL front end could not read {}:\n{}", options.file.string(), diags.format_all()));
  out.add(cuda_dir(k) + k.name + ".metal", unit.cuda_source());
  for (const auto& h : unit.cuda_headers())
    if (!h.key.starts_with("..") && !std::filesystem::path(h.key).is_absolute()) out.add(cuda_dir(k) + h.key, h.text);
}

}  // namespace

std::string cuda_dir(const ir::Kernel& k) { return "cuda/" + k.name + "/"; }
std::string cuda_launcher_path(const ir::Kernel& k) { return cuda_dir(k) + "launcher.cu"; }

std::string cuda_type_name(const std::string& msl) {
  static const std::set<std::string> kElements = {"bool", "char",  "uchar", "short",  "ushort", "int",
                                                  "uint", "long",  "ulong", "half",   "bfloat", "float"};
  if (msl.size() < 2 || msl.back() < '2' || msl.back() > '4') return msl;
  return kElements.count(msl.substr(0, msl.size() - 1)) ? "mtl_" + msl : msl;
}

void emit_cuda(const ir::Kernel& k, support::OutputSet& out) {
  for (const ir::Kernel* m : dispatched_kernels(k)) {
    add_cuda_sources(*m, out);
    out.add(cuda_launcher_path(*m), launcher_source(*m));
    out.add(cuda_dir(*m) + "host.cpp", host_source(*m));
  }
  out.add(cuda_dir(k) + "modules.cu", modules_source(k));
  for (const auto& f : support::mtlgen_cuda_files()) out.add("cuda_shim/" + std::string(f.path), std::string(f.bytes));
}

std::vector<std::string> cuda_compile_units(const ir::Kernel& k) {
  std::vector<std::string> units = {cuda_dir(k) + "modules.cu", "cuda_shim/mtlcu/runner.cu", sim_bridge_path(k),
                                    k.name + "/" + k.name + "_reference.cpp"};
  if (!k.is_family()) units.erase(units.begin() + 2);  // host.cpp brings the kernel's own bridge
  for (const ir::Kernel* m : dispatched_kernels(k)) {
    units.push_back(cuda_launcher_path(*m));
    units.push_back(cuda_dir(*m) + "host.cpp");
    if (m != &k) units.push_back(m->name + "/" + m->name + "_reference.cpp");
  }
  return units;
}

}  // namespace mtlgen::emit
