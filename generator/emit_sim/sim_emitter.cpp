#include "emit_sim/sim_emitter.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <map>
#include <set>
#include <stdexcept>
#include <vector>

#include "emit_common/launch_args.h"
#include "emit_msl/msl_emitter.h"
#include "emit_reference/reference_emitter.h"
#include "msl/msl_unit.h"
#include "mtlsim/msl_source.h"
#include "support/templates.h"

namespace mtlgen::emit {

using support::TemplateData;

namespace {

TemplateData item(std::initializer_list<std::pair<std::string, std::string>> fields) {
  TemplateData d;
  for (const auto& [key, value] : fields) d.set(key, value);
  return d;
}

std::vector<std::string> launcher_args(const ir::Kernel& k, const ir::Variant& v) {
  // Non-const parameter struct: `constant` is an empty macro in the shim, so the parameter is a
  // plain reference.
  const LaunchArgSpelling sim{
      .params_qualifier = "",
      .threadgroup_array =
          [](const std::string& type, size_t i) {
            return fmt::format("static_cast<{}*>(tc.threadgroup_memory[{}])", type, i);
          },
      .builtin =
          [](ir::Builtin b, const std::string& msl_type) {
            return fmt::format("mtlsim::as_builtin<{}>(tc.{})", msl_type, ir::info(b).attribute);
          },
  };
  std::vector<std::string> args = generated_launch_args(k, v, sim);
  for (size_t i = 0; i + 1 < args.size(); ++i) args[i] += ",";
  return args;
}

// The kernel's template arguments (MSL spellings, with tunables) or the reference's (C++ spellings).
enum class Spelling { msl_kernel, cpp_reference };

std::string template_args(const ir::Kernel& k, const ir::Variant& v, Spelling spelling) {
  bool msl = spelling == Spelling::msl_kernel;
  std::vector<std::string> parts;
  for (const auto& t : k.type_params) {
    const auto& info = ir::info(v.types.at(t.name));
    parts.push_back(msl ? info.msl : info.cpp);
  }
  if (msl) {  // tunables do not change the reference
    for (const auto& t : k.tunables) parts.push_back(std::to_string(v.tunables.at(t.name)));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// `values[i]` as a `type` value: 16-bit floats round through float, as the glue's literals do.
std::string converted(ir::ScalarType type, size_t i, Spelling spelling) {
  const char* name = spelling == Spelling::msl_kernel ? ir::info(type).msl : ir::info(type).cpp;
  std::string value = fmt::format("values[{}]", i);
  if (type == ir::ScalarType::boolean) return value + " != 0";
  if (type == ir::ScalarType::f16 || type == ir::ScalarType::bf16) value = fmt::format("static_cast<float>({})", value);
  return fmt::format("static_cast<{}>({})", name, value);
}

// `name = <values[i] converted to its type>` for each function constant.
TemplateData constant_assignments(const ir::Kernel& k, Spelling spelling) {
  TemplateData list{TemplateData::type::list};
  for (size_t i = 0; i < k.function_constants.size(); ++i) {
    const auto& f = k.function_constants[i];
    TemplateData item;
    item.set("name", f.name);
    item.set("value", converted(f.type, i, spelling));
    list.push_back(item);
  }
  return list;
}

// `k` with only the variants `entry_points` names (all of them when it is empty).
ir::Kernel with_variants(const ir::Kernel& k, const std::set<std::string>& entry_points) {
  ir::Kernel subset = k;
  if (!entry_points.empty()) {
    std::erase_if(subset.variants, [&](const ir::Variant& v) { return !entry_points.count(v.entry_point); });
  }
  return subset;
}

std::string launcher_source(const ir::Kernel& k) {
  TemplateData variants{TemplateData::type::list};
  for (const auto& v : k.variants) {
    TemplateData item;
    item.set("symbol", launcher_symbol(v));
    item.set("group_symbol", group_symbol(v));
    std::string args = template_args(k, v, Spelling::msl_kernel);
    item.set("template_args", args.empty() ? std::string() : "<" + args + ">");
    item.set("args", support::string_list(launcher_args(k, v)));
    variants.push_back(item);
  }
  TemplateData d;
  d.set("kernel", k.name);
  d.set("spec_path", k.spec_path);
  d.set("variants", variants);
  d.set("constants", constant_assignments(k, Spelling::msl_kernel));
  return support::render_template("sim/launcher.cpp.mustache", d);
}

std::vector<std::string> reference_spans(const ir::Kernel& k, const ir::Variant& v) {
  std::vector<std::string> spans;
  size_t i = 0;  // a family's intermediates are not the reference's: its slots skip them
  for (const auto& b : k.buffers) {
    if (b.intermediate) continue;
    std::string type = std::string(b.is_output() ? "" : "const ") + ir::info(b.type.resolve(v.types)).cpp;
    spans.push_back(fmt::format("std::span<{0}>(static_cast<{0}*>(slot[{1}]), elements[{1}])", type, i++));
  }
  return spans;
}

// `.TG = 256, .N_READS = 4`: a designated initializer of the variant's Tuning.
std::string tuning_init(const ir::Kernel& k, const ir::Variant& v) {
  std::vector<std::string> fields;
  for (const auto& t : k.tunables) fields.push_back(fmt::format(".{} = {}", t.name, v.tunables.at(t.name)));
  return fmt::format("{}", fmt::join(fields, ", "));
}

// The Dims and Scalars fields, and for a kernel with a dispatch of its own each variant's Tuning and
// Types and the buffers whose element counts the host description gives.
void host_description(const ir::Kernel& k, TemplateData& d) {
  TemplateData dims{TemplateData::type::list}, scalars{TemplateData::type::list};
  for (size_t i = 0; i < k.dims.size(); ++i) {
    dims.push_back(item({{"name", k.dims[i].name}, {"index", std::to_string(i)}}));
  }
  for (size_t i = 0; i < k.scalars.size(); ++i) {
    const auto& s = k.scalars[i];
    scalars.push_back(item({{"name", s.name}, {"value", converted(s.type, i, Spelling::cpp_reference)}}));
  }
  d.set("dims", dims);
  d.set("scalars", scalars);
  d.set("has_dispatch", !k.is_family());
  TemplateData variants{TemplateData::type::list}, buffers{TemplateData::type::list};
  for (const auto& v : k.variants) {
    std::vector<std::string> types;
    for (const auto& t : k.type_params) {
      types.push_back(fmt::format(".{} = mtlgen::DType::{}", t.name, ir::info(v.types.at(t.name)).suffix));
    }
    variants.push_back(item(
        {{"tuning", tuning_init(k, v)}, {"types", fmt::format("{}", fmt::join(types, ", "))}}));
  }
  for (const auto& b : k.buffers) buffers.push_back(item({{"name", b.name}}));
  d.set("variants", variants);
  d.set("buffers", buffers);
}

std::string bridge_source(const ir::Kernel& k) {
  TemplateData combos{TemplateData::type::list};
  std::set<std::string> seen;
  for (const auto& v : k.variants) {
    std::string symbol = reference_symbol(k, v);
    if (!seen.insert(symbol).second) continue;
    TemplateData item;
    item.set("symbol", symbol);
    std::string args = template_args(k, v, Spelling::cpp_reference);
    item.set("template_args", args.empty() ? std::string() : "<" + args + ">");
    item.set("spans", support::string_list(reference_spans(k, v)));
    item.set("tuning", tuning_init(k, v));
    combos.push_back(item);
  }
  TemplateData d;
  d.set("kernel", k.name);
  d.set("spec_path", k.spec_path);
  d.set("combos", combos);
  d.set("constants", constant_assignments(k, Spelling::cpp_reference));
  host_description(k, d);
  return support::render_template("sim/reference_bridge.cpp.mustache", d);
}

// ---- hand-written kernels (`source:`): the kernel object calls the file's own functions ----

// C++ for the value a parameter of the file's function receives, bound by its Metal index: the
// host puts buffers and argument blobs in slot[n] for [[buffer(n)]], threadgroup memory at
// tc.threadgroup_memory[n] for [[threadgroup(n)]].
std::string source_arg(const ir::KernelParam& p) {
  const char* proxy = p.by_reference ? "mtlsim_ref" : "mtlsim_ptr";
  switch (p.kind) {
    case ir::KernelParam::Kind::buffer: return fmt::format("{}{{slot[{}]}}", proxy, p.index);
    case ir::KernelParam::Kind::threadgroup_array: return fmt::format("{}{{tc.threadgroup_memory[{}]}}", proxy, p.index);
    case ir::KernelParam::Kind::builtin:
      return fmt::format("mtlsim::as_builtin<{}>(tc.{})", p.builtin_type, ir::info(p.builtin).attribute);
    default: break;
  }
  throw std::logic_error("a kernel object's launcher binds buffers, threadgroup memory and builtins");
}

// `name = <values[index] converted to its type>` for each function constant the file declares.
TemplateData file_constant_assignments(const ir::SourceKernel& source) {
  TemplateData list{TemplateData::type::list};
  for (const auto& f : source.file_constants) {
    TemplateData item;
    item.set("name", f.name);
    item.set("value", converted(f.type, static_cast<size_t>(f.index), Spelling::msl_kernel));
    list.push_back(item);
  }
  return list;
}

// The kernel function a launcher calls: `rms` of `rms<float, 4>`.
std::string launched_function(const ir::SourceLauncher& l) { return l.call.substr(0, l.call.find('<')); }

std::string source_launcher_source(const ir::Kernel& k, const std::vector<ir::SourceLauncher>& launchers) {
  TemplateData entries{TemplateData::type::list};
  for (const auto& l : launchers) {
    std::vector<std::string> args;
    for (const auto& p : l.params) args.push_back(source_arg(p));
    for (size_t i = 0; i + 1 < args.size(); ++i) args[i] += ",";
    TemplateData item;
    item.set("symbol", "mtlsim_thread_" + l.host_name);
    item.set("group_symbol", "mtlsim_group_" + l.host_name);
    item.set("call", l.call);
    item.set("function", launched_function(l));
    item.set("args", support::string_list(args));
    entries.push_back(item);
  }
  TemplateData d;
  d.set("source", source_object_file_name(k));
  d.set("entries", entries);
  d.set("constants", file_constant_assignments(*k.source));
  return support::render_template("sim/source_launcher.cpp.mustache", d);
}

// The launchers include the kernel's .metal between kernel_source_begin.h and kernel_source_end.h
// (shim/mtlsim/), which mark the lines of the `return`s it executes for reports.
std::string with_return_marks(std::string launcher, const std::string& metal_file) {
  const std::string include = fmt::format("#include \"{}\"\n", metal_file);
  size_t at = launcher.find(include);
  if (at == std::string::npos) throw std::logic_error("a simulator launcher does not include its kernel");
  launcher.replace(at, include.size(),
                   "#include <mtlsim/kernel_source_begin.h>\n" + include + "#include <mtlsim/kernel_source_end.h>\n");
  return launcher;
}

// The emitted .metal as the simulator compiles it. A body that declares threadgroup variables goes
// through the MSL front end, which makes each one storage the threadgroup's threads share, as in
// hand-written files (with `threadgroup` an empty macro it would be an array per thread); other
// bodies need only [[threadgroup(n)]] respelled.
std::string simulator_msl(const ir::Kernel& k) {
  std::string text = msl_source(k);
  if (k.body_threadgroup_variables.empty()) return mtlsim::prepare_msl_for_sim(text);
  msl::ParseOptions options;
  options.file = k.name + ".metal";
  options.text = std::move(text);
  options.conformance = false;
  support::Diagnostics diags;
  msl::Unit unit = msl::parse(options, diags);
  if (diags.has_errors())
    throw std::runtime_error(fmt::format("the MSL front end could not read {}:\n{}", options.file.string(), diags.format_all()));
  return unit.simulator_source();
}

}  // namespace

std::string sim_dir(const ir::Kernel& k) { return "sim/" + k.name + "/"; }
std::string sim_launcher_path(const ir::Kernel& k) { return sim_dir(k) + "launcher.cpp"; }
std::string sim_bridge_path(const ir::Kernel& k) { return sim_dir(k) + "reference_bridge.cpp"; }

namespace {
// A hand-written kernel's launcher is its entry point's (one per host name, any tune point).
const std::string& launched_name(const ir::Variant& v) {
  return v.source_host_name.empty() ? v.entry_point : v.source_host_name;
}
}  // namespace

std::string launcher_symbol(const ir::Variant& v) { return "mtlsim_thread_" + launched_name(v); }
std::string group_symbol(const ir::Variant& v) { return "mtlsim_group_" + launched_name(v); }

std::string reference_symbol(const ir::Kernel& k, const ir::Variant& v) {
  std::string symbol = k.name;
  for (const auto& t : k.type_params) symbol += std::string("_") + ir::info(v.types.at(t.name)).suffix;
  if (reference_reads_tunables(k)) {  // one result per variant, not per type combination
    for (const auto& t : k.tunables) symbol += fmt::format("_{}{}", t.name, v.tunables.at(t.name));
  }
  return symbol;
}

void emit_sim(const ir::Kernel& k, support::OutputSet& out) { emit_sim_variants(k, {}, out); }

void emit_sim_variants(const ir::Kernel& k, const std::set<std::string>& entry_points, support::OutputSet& out) {
  const std::string dir = sim_dir(k);
  const ir::Kernel run = with_variants(k, entry_points);
  if (k.is_source()) {
    // The kernel is an object of its own (emit_sim_source_object); the module adds the bridge.
  } else if (k.is_family()) {
    out.add(sim_launcher_path(k), "// A kernel family: each of its kernels is a module of its own; this one holds the reference.\n");
  } else {
    out.add(dir + k.name + ".metal", simulator_msl(run));
    out.add(sim_launcher_path(k), with_return_marks(launcher_source(run), k.name + ".metal"));
  }
  out.add(sim_bridge_path(k), bridge_source(k));
}

std::string source_object_file_name(const ir::Kernel& k) {
  const std::string name = std::filesystem::path(k.source->file).filename().string();
  return name.ends_with(".metal") ? name : name + ".metal";  // reports know kernel lines by it
}

std::vector<ir::LoopFormKernel> launched_loop_forms(const ir::Kernel& k, const std::vector<ir::SourceLauncher>& launchers) {
  std::set<std::string> called;
  for (const auto& l : launchers) called.insert(launched_function(l));
  std::vector<ir::LoopFormKernel> out;
  std::copy_if(k.source->loop_forms.begin(), k.source->loop_forms.end(), std::back_inserter(out),
               [&](const ir::LoopFormKernel& f) { return called.count(f.function); });
  return out;
}

std::string source_object_launcher_path() { return std::string(kSourceObjectDir) + "launcher.cpp"; }

void emit_sim_source_object(const ir::Kernel& k, const std::vector<ir::SourceLauncher>& launchers,
                            const std::vector<ir::LoopFormKernel>& loop_forms, support::OutputSet& out) {
  const std::string file = source_object_file_name(k);
  std::string text = k.source->simulator_text;
  std::map<std::string, std::string> headers = k.source->simulator_headers;
  msl::drop_explicit_instantiations(text, headers);
  for (const auto& [name, header] : headers) {  // files beside it: the source itself too
    if (name != file) out.add(kSourceObjectDir + name, ir::with_loop_forms(header, loop_forms, name));
  }
  out.add(kSourceObjectDir + file, ir::with_loop_forms(std::move(text), loop_forms));
  out.add(source_object_launcher_path(), with_return_marks(source_launcher_source(k, launchers), file));
}

}  // namespace mtlgen::emit
