#include "emit_msl/msl_emitter.h"

#include <fmt/format.h>

#include <stdexcept>

#include "emit_common/cpp_text.h"
#include "emit_common/emitter.h"
#include "support/text.h"

namespace mtlgen::emit {

namespace {

using support::TemplateData;

class MslWriter {
 public:
  explicit MslWriter(const ir::Kernel& k) : k_(k) {}

  std::string run() const {
    TemplateData d;
    d.set("msl_version", k_.msl_version);
    d.set("banner", banner(k_, k_.name + ".metal"));
    d.set("kernel", k_.name);
    d.set("summary", comment_text(k_.summary));
    d.set("params_struct", k_.params_struct_name());
    d.set("params_index", std::to_string(k_.params_index));
    d.set("params_fields", params_fields());
    d.set("function_constants_gap", k_.function_constants.empty() ? "" : "\n");
    d.set("function_constants", function_constants());
    d.set("helpers", helpers());
    d.set("preludes", preludes());
    // Without type parameters or tunables the kernel is a plain function named like its one entry point.
    d.set("templated", !template_param_names().empty());
    d.set("template_params", template_params());
    d.set("max_threads", max_threads());
    d.set("parameters", parameter_list());
    d.set("prologue", support::string_list(prologue()));
    d.set("body_origin", comment_text(fmt::format("{}:{}", k_.spec_path, k_.body.loc.line)));
    d.set("body", support::indent_lines(k_.body.text, "  "));
    d.set("variant_axes", variant_axes());
    d.set("macro_params", macro_params());
    d.set("variants", variants());
    return support::render_template("msl/kernel.metal.mustache", d);
  }

 private:
  TemplateData params_fields() const {
    TemplateData list{TemplateData::type::list};
    for (const auto& f : k_.params_fields) {
      TemplateData item;
      item.set("type", ir::info(f.type).msl);
      item.set("name", f.name);
      list.push_back(item);
    }
    return list;
  }

  TemplateData function_constants() const {
    TemplateData list{TemplateData::type::list};
    for (const auto& f : k_.function_constants) {
      TemplateData item;
      item.set("type", ir::info(f.type).msl);
      item.set("name", f.name);
      item.set("index", std::to_string(f.index));
      list.push_back(item);
    }
    return list;
  }

  TemplateData helpers() const {
    TemplateData list{TemplateData::type::list};
    for (const auto& h : ir::all_helpers()) {  // table order puts dependencies first
      if (!k_.helpers_used.count(h.helper)) continue;
      TemplateData item;
      item.set("name", h.name);
      item.set("file", h.file);
      std::string text(support::template_file(std::string("msl/helpers/") + h.file));
      while (!text.empty() && text.back() == '\n') text.pop_back();
      item.set("text", text);
      list.push_back(item);
    }
    return list;
  }

  TemplateData preludes() const {
    TemplateData list{TemplateData::type::list};
    for (const auto& b : msl_blocks(k_)) {
      if (b.block == &k_.body || b.block->text.empty()) continue;
      TemplateData item;
      item.set("marker", b.marker);
      item.set("origin", comment_text(fmt::format("{}:{}", k_.spec_path, b.block->loc.line)));
      std::string text = b.block->text;
      while (!text.empty() && text.back() == '\n') text.pop_back();
      item.set("text", text);
      list.push_back(item);
    }
    return list;
  }

  std::vector<std::string> template_param_names() const {
    std::vector<std::string> names;
    for (const auto& t : k_.type_params) names.push_back(t.name);
    for (const auto& t : k_.tunables) names.push_back(t.name);
    return names;
  }

  std::string template_params() const {
    std::vector<std::string> parts;
    for (const auto& t : k_.type_params) parts.push_back("typename " + t.name);
    for (const auto& t : k_.tunables) parts.push_back("uint " + t.name);
    return fmt::format("{}", fmt::join(parts, ", "));
  }

  std::string macro_params() const { return fmt::format("{}", fmt::join(template_param_names(), ", ")); }

  std::string max_threads() const {
    expr::Expr product = k_.dispatch.threads_from_dims ? *k_.dispatch.max_threads
                                                       : expr::product(k_.dispatch.threads_per_threadgroup);
    expr::Spelling s;
    s.symbol = [](const std::string& n) { return n; };
    s.size_of = [](const std::string& t) { return "sizeof(" + t + ")"; };
    return expr::render(product, s);
  }

  std::string parameter(const ir::KernelParam& p) const {
    switch (p.kind) {
      case ir::KernelParam::Kind::buffer: {
        const auto& b = k_.buffers[p.ref];
        return fmt::format("device {}{}* {} [[buffer({})]]", b.is_output() ? "" : "const ", msl_type(b.type),
                           b.name, p.index);
      }
      case ir::KernelParam::Kind::params:
        return fmt::format("constant {}& params [[buffer({})]]", k_.params_struct_name(), p.index);
      case ir::KernelParam::Kind::threadgroup_array: {
        const auto& a = k_.threadgroup_arrays[p.ref];
        return fmt::format("threadgroup {}* {} [[threadgroup({})]]", msl_type(a.type), a.name, p.index);
      }
      case ir::KernelParam::Kind::builtin: {
        const auto& b = ir::info(p.builtin);
        return fmt::format("{} {} [[{}]]", ir::builtin_msl_type(p.builtin, k_.dispatch.rank()), b.name, b.attribute);
      }
      // Only a hand-written kernel's Variant::source_params bind these; k.params never holds them.
      case ir::KernelParam::Kind::argument:
      case ir::KernelParam::Kind::unbound:
        throw std::logic_error("a generated kernel's binding table holds an argument or unbound parameter");
    }
    return {};
  }

  std::string parameter_list() const {
    std::vector<std::string> lines;
    for (const auto& p : k_.params) lines.push_back("    " + parameter(p));
    return fmt::format("{}", fmt::join(lines, ",\n"));
  }

  // Dims and scalars the body reads, unpacked from the parameter struct under their own names.
  std::vector<std::string> prologue() const {
    std::vector<std::string> lines;
    for (const auto& f : k_.params_fields) {
      if (!k_.params_used_in_body.count(f.name)) continue;
      lines.push_back(fmt::format("const {} {} = params.{};", ir::info(f.type).msl, f.name, f.name));
    }
    return lines;
  }

  std::string variant_axes() const {
    std::vector<std::string> axes;
    if (!k_.type_tuples.empty()) axes.push_back(type_tuples());
    for (const auto& t : k_.type_tuples.empty() ? k_.type_params : std::vector<ir::TypeParam>{}) {
      std::vector<std::string> names;
      for (auto type : t.types) names.push_back(ir::info(type).msl);
      axes.push_back(fmt::format("{} in {{{}}}", t.name, fmt::join(names, ", ")));
    }
    for (const auto& t : k_.tunables) axes.push_back(fmt::format("{} in {{{}}}", t.name, fmt::join(t.values, ", ")));
    return axes.empty() ? "a single configuration" : fmt::format("{}", fmt::join(axes, " x "));
  }

  // "(T, AccT) in {(float, float), (half, float)}"
  std::string type_tuples() const {
    std::vector<std::string> names, tuples;
    for (const auto& t : k_.type_params) names.push_back(t.name);
    for (const auto& tuple : k_.type_tuples) {
      std::vector<std::string> types;
      for (const auto& t : k_.type_params) types.push_back(ir::info(tuple.at(t.name)).msl);
      tuples.push_back(fmt::format("({})", fmt::join(types, ", ")));
    }
    return fmt::format("({}) in {{{}}}", fmt::join(names, ", "), fmt::join(tuples, ", "));
  }

  TemplateData variants() const {
    TemplateData list{TemplateData::type::list};
    for (const auto& v : k_.variants) {
      std::vector<std::string> args;
      for (const auto& t : k_.type_params) args.push_back(ir::info(v.types.at(t.name)).msl);
      for (const auto& t : k_.tunables) args.push_back(std::to_string(v.tunables.at(t.name)));
      TemplateData item;
      item.set("entry_point", v.entry_point);
      item.set("args", fmt::format("{}", fmt::join(args, ", ")));
      list.push_back(item);
    }
    return list;
  }

  const ir::Kernel& k_;
};

}  // namespace

std::vector<EmbeddedBlock> msl_blocks(const ir::Kernel& kernel) {
  return {{&kernel.prelude, "prelude", "// prelude: ", 0},
          {&kernel.metal_prelude, "metal_prelude", "// metal_prelude: ", 0},
          {&kernel.body, "body", kBodyMarker, 2}};
}

std::string msl_source(const ir::Kernel& kernel) { return MslWriter(kernel).run(); }

void emit_msl(const ir::Kernel& kernel, support::OutputSet& out) {
  out.add(kernel.name + "/" + kernel.name + ".metal", msl_source(kernel));
}

}  // namespace mtlgen::emit
