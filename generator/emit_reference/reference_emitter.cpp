#include "emit_reference/reference_emitter.h"

#include <fmt/format.h>

#include <algorithm>

#include "emit_common/cpp_text.h"
#include "emit_common/emitter.h"
#include "support/text.h"

namespace mtlgen::emit {

namespace {

using support::TemplateData;

// The names the reference's code reads: its body's and its included file's.
std::set<std::string> reference_identifiers(const ir::Kernel& k) {
  return support::identifiers_in(k.reference.text + "\n" + k.reference_include.code.text);
}

class ReferenceWriter {
 public:
  explicit ReferenceWriter(const ir::Kernel& k) : k_(k) {}

  void run(support::OutputSet& out) const {
    TemplateData d;
    d.set("kernel", k_.name);
    d.set("summary", comment_text(k_.summary));
    d.set("template_decl", template_decl());
    d.set("parameters", parameters());
    d.set("instantiations", instantiations());
    d.set("size_checks", size_checks());
    d.set("locals", support::string_list(locals()));
    std::vector<std::string> includes;
    d.set("shared_prelude", prelude(k_.prelude, "// prelude: ", includes));
    d.set("reference_prelude", prelude(k_.reference_prelude, "// reference_prelude: ", includes));
    d.set("origin", comment_text(fmt::format("{}:{}", k_.spec_path, k_.reference.loc.line)));
    d.set("body", support::indent_lines(without_includes(k_.reference.text, includes), "  "));
    d.set("included", included(k_.reference_include.code, includes));
    d.set("hoisted_includes", support::string_list(includes));
    d.set("banner", banner(k_, k_.name + "_reference.h"));
    out.add(k_.name + "/" + k_.name + "_reference.h", support::render_template("reference/reference.h.mustache", d));
    d.set("banner", banner(k_, k_.name + "_reference.cpp"));
    out.add(k_.name + "/" + k_.name + "_reference.cpp", support::render_template("reference/reference.cpp.mustache", d));
  }

 private:
  // `#include` lines of a block move to the top of the file (a header cannot be read inside a
  // namespace or a function); the block keeps an empty line so its lines still match the spec's.
  static std::string without_includes(const std::string& text, std::vector<std::string>& includes) {
    std::string out;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t end = text.find('\n', pos);
      std::string line = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
      size_t first = line.find_first_not_of(" \t");
      size_t word = first == std::string::npos || line[first] != '#' ? std::string::npos
                                                                      : line.find_first_not_of(" \t", first + 1);
      if (word != std::string::npos && line.compare(word, 7, "include") == 0) {
        std::string directive = line.substr(first);
        if (std::find(includes.begin(), includes.end(), directive) == includes.end()) includes.push_back(directive);
      } else {
        out += line;
      }
      if (end == std::string::npos) break;
      out += '\n';
      pos = end + 1;
    }
    return out;
  }

  TemplateData prelude(const ir::CodeBlock& block, const char* marker, std::vector<std::string>& includes) const {
    TemplateData list{TemplateData::type::list};
    if (block.text.empty()) return list;
    TemplateData item;
    item.set("marker", marker);
    item.set("origin", comment_text(fmt::format("{}:{}", k_.spec_path, block.loc.line)));
    std::string text = without_includes(block.text, includes);
    while (!text.empty() && text.back() == '\n') text.pop_back();
    item.set("text", text);
    list.push_back(item);
    return list;
  }

  // The reference's included file, after the body in the same function, marked with its own
  // file and line as the body is with the spec's.
  static TemplateData included(const ir::CodeBlock& block, std::vector<std::string>& includes) {
    TemplateData list{TemplateData::type::list};
    if (block.text.empty()) return list;
    TemplateData item;
    item.set("marker", kReferenceIncludeMarker);
    item.set("origin", comment_text(fmt::format("{}:{}", block.loc.file, block.loc.line)));
    item.set("text", support::indent_lines(without_includes(block.text, includes), "  "));
    list.push_back(item);
    return list;
  }

  std::string template_decl() const {
    if (k_.type_params.empty()) return "";
    std::vector<std::string> parts;
    for (const auto& t : k_.type_params) parts.push_back("typename " + t.name);
    return fmt::format("template <{}>\n", fmt::join(parts, ", "));
  }

  std::string parameters() const {
    std::vector<std::string> parts;
    for (const auto& b : k_.buffers) {
      if (b.intermediate) continue;  // the GPU's alone
      parts.push_back(fmt::format("    std::span<{}{}> {}", b.is_output() ? "" : "const ", host_type(b.type), b.name));
    }
    return fmt::format("{}", fmt::join(parts, ",\n"));
  }

  TemplateData instantiations() const {
    TemplateData list{TemplateData::type::list};
    if (k_.type_params.empty()) return list;
    std::set<std::string> seen;
    for (const auto& v : k_.variants) {
      std::vector<std::string> args;
      for (const auto& t : k_.type_params) args.push_back(ir::info(v.types.at(t.name)).cpp);
      std::string joined = fmt::format("{}", fmt::join(args, ", "));
      if (!seen.insert(joined).second) continue;  // tunables do not change the reference
      TemplateData item;
      item.set("args", joined);
      item.set("parameters", concrete_parameters(v));
      list.push_back(item);
    }
    return list;
  }

  std::string concrete_parameters(const ir::Variant& v) const {
    std::vector<std::string> parts;
    for (const auto& b : k_.buffers) {
      if (b.intermediate) continue;
      std::string type = ir::info(b.type.resolve(v.types)).cpp;
      parts.push_back(fmt::format("    std::span<{}{}>", b.is_output() ? "" : "const ", type));
    }
    return fmt::format("{}", fmt::join(parts, ",\n"));
  }

  TemplateData size_checks() const {
    TemplateData list{TemplateData::type::list};
    for (const auto& b : k_.buffers) {
      if (b.intermediate) continue;
      TemplateData item;
      item.set("name", b.name);
      list.push_back(item);
    }
    return list;
  }

  // Dims as int64_t (index arithmetic never overflows), scalars and function constants the body reads.
  std::vector<std::string> locals() const {
    auto used = reference_identifiers(k_);
    std::vector<std::string> lines;
    for (const auto& d : k_.dims) {
      if (used.count(d.name)) lines.push_back(fmt::format("const int64_t {0} = dims.{0};", d.name));
    }
    for (const auto& s : k_.scalars) {
      if (used.count(s.name)) lines.push_back(fmt::format("const {1} {0} = scalars.{0};", s.name, ir::info(s.type).cpp));
    }
    for (const auto& f : k_.function_constants) {
      if (used.count(f.name)) {
        lines.push_back(fmt::format("const {1} {0} = function_constants.{0};", f.name, ir::info(f.type).cpp));
      }
    }
    for (const auto& t : k_.tunables) {
      if (used.count(t.name)) lines.push_back(fmt::format("const int64_t {0} = tuning.{0};", t.name));
    }
    return lines;
  }

  const ir::Kernel& k_;
};

}  // namespace

std::vector<EmbeddedBlock> reference_blocks(const ir::Kernel& kernel) {
  return {{&kernel.prelude, "prelude", "// prelude: ", 0},
          {&kernel.reference_prelude, "reference_prelude", "// reference_prelude: ", 0},
          {&kernel.reference_include.code, "reference_include", kReferenceIncludeMarker, 2},
          {&kernel.reference, "reference", kReferenceMarker, 2}};
}

bool reference_reads_tunables(const ir::Kernel& kernel) {
  auto used = reference_identifiers(kernel);
  for (const auto& t : kernel.tunables) if (used.count(t.name)) return true;
  return false;
}

void emit_reference(const ir::Kernel& kernel, support::OutputSet& out) { ReferenceWriter(kernel).run(out); }

void emit_host_support(const std::vector<ir::Kernel>&, support::OutputSet& out) {
  for (const char* name : {"mtlgen_host.h", "mtlgen_numeric.h", "mtlgen_testdata.h"}) {
    std::string text(support::template_file(std::string("support/") + name));
    out.add(std::string("support/") + name, library_banner(name) + "\n" + text);
  }
}

}  // namespace mtlgen::emit
