#include "emit_msl/msl_emitter.h"

#include <fmt/format.h>

#include <map>
#include <stdexcept>
#include <utility>

#include "emit_common/cpp_text.h"
#include "emit_common/emitter.h"
#include "support/text.h"

namespace mtlgen::emit {

namespace {

using support::TemplateData;

// A line the writer puts before each spec block and takes out again, counting where the block starts.
constexpr char kBlockStart = '\x01';

std::string block_start(const char* what) { return std::string(1, kBlockStart) + what + "\n"; }

// The .metal and the first line of each spec block in it, by block (the spec key).
struct Rendered {
  std::string text;
  std::map<std::string, int> first_lines;
};

// `text` without the block-start lines, and where each block begins.
Rendered take_block_starts(const std::string& text) {
  Rendered r;
  int line = 1;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    end = end == std::string::npos ? text.size() : end + 1;
    if (text[begin] == kBlockStart) {
      r.first_lines[text.substr(begin + 1, end - begin - 2)] = line;
    } else {
      r.text.append(text, begin, end - begin);
      ++line;
    }
    begin = end;
  }
  return r;
}

class MslWriter {
 public:
  explicit MslWriter(const ir::Kernel& k) : k_(k) {}

  Rendered run() const {
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
    d.set("body", block_start("body") + support::indent_lines(k_.body.text, "  "));
    d.set("variant_axes", variant_axes());
    d.set("macro_params", macro_params());
    d.set("variants", variants());
    return take_block_starts(support::render_template("msl/kernel.metal.mustache", d));
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
      std::string text(support::template_file(std::string("msl/helpers/") + h.file));
      while (!text.empty() && text.back() == '\n') text.pop_back();
      item.set("text", text);
      list.push_back(item);
    }
    return list;
  }

  TemplateData preludes() const {
    TemplateData list{TemplateData::type::list};
    for (const auto& [block, what] : {std::pair{&k_.prelude, "prelude"}, std::pair{&k_.metal_prelude, "metal_prelude"}}) {
      if (block->text.empty()) continue;
      TemplateData item;
      std::string text = block->text;
      while (!text.empty() && text.back() == '\n') text.pop_back();
      item.set("text", block_start(what) + text);
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
  const Rendered r = MslWriter(kernel).run();
  auto first_line = [&](const char* what) {
    auto at = r.first_lines.find(what);
    return at == r.first_lines.end() ? 0 : at->second;
  };
  return {{&kernel.prelude, "prelude", "", 0, first_line("prelude")},
          {&kernel.metal_prelude, "metal_prelude", "", 0, first_line("metal_prelude")},
          {&kernel.body, "body", "", 2, first_line("body")}};
}

std::string msl_source(const ir::Kernel& kernel) { return MslWriter(kernel).run().text; }

void emit_msl(const ir::Kernel& kernel, support::OutputSet& out) {
  out.add(kernel.name + "/" + kernel.name + ".metal", msl_source(kernel));
}

}  // namespace mtlgen::emit
