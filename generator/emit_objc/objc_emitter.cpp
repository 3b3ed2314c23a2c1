#include "emit_objc/objc_emitter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "emit_common/cpp_text.h"
#include "emit_common/emitter.h"
#include "emit_objc/family_glue.h"
#include "emit_objc/objc_text.h"
#include "support/text.h"

namespace mtlgen::emit {

namespace {

using support::TemplateData;

// Metal's MTLDataType for a function constant of `type`.
const char* mtl_data_type(ir::ScalarType type) {
  switch (type) {
    case ir::ScalarType::f32: return "MTLDataTypeFloat";
    case ir::ScalarType::f16: return "MTLDataTypeHalf";
    case ir::ScalarType::bf16: return "MTLDataTypeBFloat";
    case ir::ScalarType::i8: return "MTLDataTypeChar";
    case ir::ScalarType::i16: return "MTLDataTypeShort";
    case ir::ScalarType::i32: return "MTLDataTypeInt";
    case ir::ScalarType::u8:
    case ir::ScalarType::bytes: return "MTLDataTypeUChar";
    case ir::ScalarType::u16: return "MTLDataTypeUShort";
    case ir::ScalarType::u32: return "MTLDataTypeUInt";
    case ir::ScalarType::boolean: return "MTLDataTypeBool";
  }
  return "MTLDataTypeNone";
}

class ObjcWriter {
 public:
  explicit ObjcWriter(const ir::Kernel& k)
      : k_(k), camel_(k.names.camel), class_name_(k.names.objc_class), facade_class_(k.names.facade_class) {}

  void run(support::OutputSet& out) const {
    TemplateData d = names();
    variants(d);
    type_choices(d);
    tuning_names(d);
    d.set("buffer_docs", buffer_docs());
    d.set("buffer_checks", buffer_checks());
    d.set("buffers_init", buffers_initializer());
    d.set("bindings", bindings());
    function_constants(d);
    encode_signatures(d);
    render(out, d, k_.names.objc_header, "objc/class.h.mustache");
    render(out, d, k_.names.objc_source, "objc/class.mm.mustache");
    render(out, d, k_.names.facade_header, "objc/facade.h.mustache");
  }

 private:
  void render(support::OutputSet& out, TemplateData& d, const std::string& file, const char* tmpl) const {
    d.set("banner", banner(k_, file));
    out.add(k_.names.path(file), support::render_template(tmpl, d));
  }

  TemplateData names() const {
    TemplateData d;
    d.set("kernel", k_.name);
    d.set("summary", comment_text(k_.summary));
    d.set("camel", camel_);
    d.set("class_name", class_name_);
    d.set("facade_class", facade_class_);
    d.set("ns", k_.names.cpp_namespace);
    d.set("has_tunables", !k_.tunables.empty());
    d.set("has_threadgroup_arrays", !k_.threadgroup_arrays.empty());
    d.set("has_scalars", !k_.scalars.empty());
    d.set("scalars_value", k_.scalars.empty() ? "kernel::Scalars{}" : "scalars");
    return d;
  }

  // The variant table itself is <kernel>_types.h's kVariants; the class documents its extent.
  void variants(TemplateData& d) const {
    d.set("variant_count", std::to_string(k_.variants.size()));
    d.set("variant_noun", k_.variants.size() == 1 ? "variant" : "variants");
    d.set("variant_axes", variant_axes());
    std::vector<std::string> defaults;
    for (const auto& t : k_.tunables) defaults.push_back(fmt::format("{} = {}", t.name, t.default_value));
    d.set("default_tuning", defaults.empty() ? std::string("no tunables") : fmt::format("{}", fmt::join(defaults, ", ")));
  }

  // How tuning files and command lines name a type choice.
  void type_choices(TemplateData& d) const {
    std::vector<std::string> key, example;
    for (const auto& t : k_.type_params) {
      key.push_back(fmt::format("\"{}{}=\" + std::string(mtlgen::dtype_name(types.{}))", key.empty() ? "" : ",", t.name, t.name));
      example.push_back(fmt::format("{}={}", t.name, ir::info(k_.variants.front().types.at(t.name)).spec_name));
    }
    d.set("types_key", key.empty() ? std::string("std::string()") : fmt::format("{}", fmt::join(key, " + ")));
    d.set("types_key_example", example.empty() ? std::string("\"\" (no type parameters)")
                                                : fmt::format("\"{}\"", fmt::join(example, ",")));
  }

  void tuning_names(TemplateData& d) const {
    std::vector<std::string> names, values;
    for (const auto& t : k_.tunables) {
      names.push_back(t.name);
      values.push_back(fmt::format("{{\"{0}\", tuning.{0}}}", t.name));
    }
    d.set("tunable_names", support::string_list(names));
    d.set("tuning_values", fmt::format("{}", fmt::join(values, ", ")));
  }

  std::string variant_axes() const {
    std::vector<std::string> axes;
    for (const auto& t : k_.type_params) {
      std::vector<std::string> names;
      for (auto type : t.types) names.push_back(ir::info(type).spec_name);
      axes.push_back(fmt::format("{} in {{{}}}", t.name, fmt::join(names, ", ")));
    }
    for (const auto& t : k_.tunables) axes.push_back(fmt::format("{} in {{{}}}", t.name, fmt::join(t.values, ", ")));
    return axes.empty() ? "no type parameters or tunables" : fmt::format("{}", fmt::join(axes, " x "));
  }

  TemplateData buffer_docs() const {
    TemplateData list{TemplateData::type::list};
    for (size_t i = 0; i < k_.buffers.size(); ++i) {
      const ir::Buffer& b = k_.buffers[i];
      TemplateData item;
      item.set("name", b.name);
      item.set("label", k_.names.buffers[i].label);
      item.set("describe", describe_buffer(b));
      item.set("storage", b.host_visible ? "Shared" : "Private");
      item.set("host_visible", b.host_visible ? "YES" : "NO");
      item.set("element_size", element_size(b.type));
      const std::string method = "- (nullable id<MTLBuffer>)new" + k_.names.buffers[i].camel + "BufferForDims";
      item.set("buffer_camel", k_.names.buffers[i].camel);
      item.set("types_pad", std::string(method.size() - std::string("types").size(), ' '));
      item.set("error_pad", std::string(method.size() - std::string("error").size(), ' '));
      list.push_back(item);
    }
    return list;
  }

  // `{{(__bridge void*)x, xOffset}, ...}`: the encode methods' buffers as the facade's Buffers, on
  // one line when it is short, else one buffer per line.
  std::string buffers_initializer() const {
    std::vector<std::string> items;
    for (const auto& b : k_.names.buffers) items.push_back(fmt::format("{{(__bridge void*){}, {}}}", b.label, b.offset));
    const std::string line = fmt::format("{{{}}}", fmt::join(items, ", "));
    if (line.size() <= 80) return line;
    return fmt::format("{{\n      {},\n  }}", fmt::join(items, ",\n      "));
  }

  TemplateData buffer_checks() const {
    TemplateData list{TemplateData::type::list};
    for (size_t i = 0; i < k_.buffers.size(); ++i) {
      const ir::Buffer& b = k_.buffers[i];
      TemplateData item;
      item.set("name", b.name);
      item.set("label", k_.names.buffers[i].label);
      item.set("offset", k_.names.buffers[i].offset);
      item.set("element_size", element_size(b.type));
      item.set("alignment", b.alignment ? fmt::format(", {}", b.alignment) : std::string());
      list.push_back(item);
    }
    return list;
  }

  // The binding table in parameter order; builtins have no host side.
  TemplateData bindings() const {
    TemplateData list{TemplateData::type::list};
    for (const auto& p : k_.params) {
      if (p.kind == ir::KernelParam::Kind::builtin) continue;
      TemplateData item;
      item.set("is_buffer", p.kind == ir::KernelParam::Kind::buffer);
      item.set("is_params", p.kind == ir::KernelParam::Kind::params);
      item.set("is_threadgroup", p.kind == ir::KernelParam::Kind::threadgroup_array);
      item.set("index", std::to_string(p.index));
      if (p.kind == ir::KernelParam::Kind::buffer) item.set("name", k_.buffers[p.ref].name);
      if (p.kind == ir::KernelParam::Kind::threadgroup_array) item.set("name", k_.threadgroup_arrays[p.ref].name);
      list.push_back(item);
    }
    return list;
  }

  // The values come from FunctionConstants in <kernel>_types.h, which declares them with their defaults.
  void function_constants(TemplateData& d) const {
    TemplateData list{TemplateData::type::list};
    for (const auto& f : k_.function_constants) {
      TemplateData item;
      item.set("name", f.name);
      item.set("index", std::to_string(f.index));
      item.set("data_type", mtl_data_type(f.type));
      list.push_back(item);
    }
    const bool has = !k_.function_constants.empty();
    d.set("has_function_constants", has);
    d.set("function_constants", list);
    d.set("constant_values", has ? "ConstantValues(functionConstants)" : "nil");
    d.set("facade_constant_values", has ? "(__bridge void*)ConstantValues(options.function_constants)" : "nullptr");
  }

  // The encode method's selector parts after `encodeToCommandEncoder:`, with and without tuning;
  // a kernel without scalars takes none.
  std::vector<SelectorPart> encode_parts(bool with_tuning) const {
    std::vector<SelectorPart> parts;
    for (const auto& b : k_.names.buffers) {
      parts.push_back({b.label, "id<MTLBuffer>", b.label});
      parts.push_back({b.offset, "NSUInteger", b.offset});
    }
    for (const char* s : {"Dims", "Scalars", "Types", "Tuning"}) {
      if (!with_tuning && std::string(s) == "Tuning") continue;
      if (k_.scalars.empty() && std::string(s) == "Scalars") continue;
      std::string name = support::lower_ascii(s);
      parts.push_back({name, fmt::format("const {}{}&", class_name_, s), name});
    }
    parts.push_back({"error", "NSError**", "error"});
    return parts;
  }

  void encode_signatures(TemplateData& d) const {
    const size_t column = std::string("- (BOOL)encodeToCommandEncoder").size();
    d.set("encode_params", aligned(column, encode_parts(true)));
    d.set("encode_params_default", aligned(column, encode_parts(false)));
  }

  const ir::Kernel& k_;
  const std::string camel_;
  const std::string class_name_;
  const std::string facade_class_;
};

// support/MTGKernelLibrary.{h,mm}: one object owning every kernel's class.
class KernelLibraryWriter {
 public:
  explicit KernelLibraryWriter(const std::vector<ir::Kernel>& kernels) : kernels_(kernels) {}

  // Kernels in library order (each with its own .metal), then the families built from them.
  TemplateData data() const {
    TemplateData d;
    TemplateData list{TemplateData::type::list}, families{TemplateData::type::list};
    std::vector<std::string> names, family_names, entry_points;
    size_t index = 0;
    for (const auto& k : kernels_) {
      if (k.is_family()) {
        families.push_back(family_library_item(k));
        family_names.push_back(k.name);
        continue;
      }
      list.push_back(kernel(k, index++));
      names.push_back(k.name);
      for (const auto& v : k.variants) entry_points.push_back(v.entry_point);
    }
    d.set("kernels", list);
    d.set("kernel_count", std::to_string(names.size()));
    d.set("kernel_plural", names.size() == 1 ? "" : "s");
    d.set("kernel_names", fmt::format("{}", fmt::join(names, ", ")));
    d.set("families", families);
    d.set("has_families", !family_names.empty());
    d.set("family_names", fmt::format("{}", fmt::join(family_names, ", ")));
    d.set("entry_point_count", std::to_string(entry_points.size()));
    return d;
  }

 private:
  static TemplateData kernel(const ir::Kernel& k, size_t index) {
    TemplateData item;
    const std::string& cls = k.names.objc_class;
    const std::string& property = k.names.property;
    item.set("kernel", k.name);
    item.set("class_name", cls);
    item.set("camel", k.names.camel);
    item.set("property", property);
    item.set("index", std::to_string(index));
    item.set("has_function_constants", !k.function_constants.empty());
    std::string version = k.msl_version;
    std::replace(version.begin(), version.end(), '.', '_');
    item.set("language_version", "MTLLanguageVersion" + version);
    const size_t column = fmt::format("  _{} = [[{} alloc] initWithLibrary", property, cls).size();
    item.set("constants_pad", std::string(column - std::string("functionConstants").size(), ' '));
    item.set("table_pad", std::string(column - std::string("tuningTable").size(), ' '));
    item.set("error_pad", std::string(column - std::string("error").size(), ' '));
    return item;
  }

  const std::vector<ir::Kernel>& kernels_;
};

}  // namespace

std::string objc_class_name(const ir::Kernel& kernel) { return kernel.names.objc_class; }

void emit_objc(const ir::Kernel& kernel, support::OutputSet& out) {
  if (kernel.is_family()) {
    emit_family_objc(kernel, out);
  } else {
    ObjcWriter(kernel).run(out);
  }
}

void emit_objc_support(const std::vector<ir::Kernel>& kernels, support::OutputSet& out) {
  for (const char* name : {"mtlgen_objc.h", "mtlgen_metal.h", "mtlgen_runtime.h", "mtlgen_runtime.mm",
                           "mtlgen_capture.mm"}) {
    TemplateData d;
    d.set("banner", library_banner(name));
    out.add(std::string("support/") + name, support::render_template(std::string("objc/") + name + ".mustache", d));
  }
  TemplateData d = KernelLibraryWriter(kernels).data();
  for (const char* file : {"MTGKernelLibrary.h", "MTGKernelLibrary.mm"}) {
    d.set("banner", library_banner(file));
    const std::string tmpl = std::string("objc/kernel_library") + (std::string(file).ends_with(".h") ? ".h" : ".mm");
    out.add(std::string("support/") + file, support::render_template(tmpl + ".mustache", d));
  }
}

}  // namespace mtlgen::emit
