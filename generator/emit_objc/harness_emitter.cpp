#include "emit_objc/harness_emitter.h"

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "emit_common/cpp_text.h"
#include "emit_common/emitter.h"
#include "emit_objc/objc_emitter.h"
#include "emit_objc/objc_text.h"

namespace mtlgen::emit {

namespace {

using support::TemplateData;

// A double as C++ source, NaN and infinities included.
std::string double_literal(double v) {
  if (std::isnan(v)) return "std::numeric_limits<double>::quiet_NaN()";
  if (std::isinf(v)) return v > 0 ? "std::numeric_limits<double>::infinity()" : "-std::numeric_limits<double>::infinity()";
  if (v == 0.0 && std::signbit(v)) return "-0.0";  // "-0" would be the integer 0: a positive zero
  return fmt::format("{}", v);
}

// The mtlgen::DType enumerator of a concrete element type; packed bytes and bools are bytes.
std::string dtype(ir::ScalarType type) {
  if (type == ir::ScalarType::bytes || type == ir::ScalarType::boolean) return "u8";
  return ir::info(type).suffix;
}

// `td::Fill{td::Dist::normal, 0, 1, {}, 0, 0, 0, {}, {}}`: a resolved fill, block fields included.
std::string fill(const ir::InputFill& f) {
  std::vector<std::string> values, set, fields;
  for (double v : f.values) values.push_back(double_literal(v));
  for (const auto& [index, value] : f.set) set.push_back(fmt::format("{{{}, {}}}", index, double_literal(value)));
  for (const auto& field : f.fields) {  // a buffer of blocks: one line per field
    fields.push_back(fmt::format("\n          {{\"{}\", {}}},", field.field, fill(field.fill)));
  }
  return fmt::format("td::Fill{{td::Dist::{}, {}, {}, {{{}}}, {}, {}, {}, {{{}}}, {{{}{}}}}}", ir::to_string(f.dist),
                     double_literal(f.a), double_literal(f.b), fmt::join(values, ", "), double_literal(f.nan_fraction),
                     double_literal(f.inf_fraction), double_literal(f.neg_inf_fraction), fmt::join(set, ", "),
                     fmt::join(fields, ""), fields.empty() ? "" : "\n      ");
}

// `td::BlockLayout{"q8_0", 34, {{"d", mtlgen::DType::f16, 1, 0}, ...}}`, or std::nullopt.
std::string block_layout(const ir::BlockLayout* layout) {
  if (!layout) return "std::nullopt";
  std::vector<std::string> fields;
  for (const auto& f : layout->fields) {
    fields.push_back(fmt::format("{{\"{}\", mtlgen::DType::{}, {}, {}}}", f.name, dtype(f.type), f.count, f.offset));
  }
  return fmt::format("td::BlockLayout{{\"{}\", {}, {{{}}}}}", layout->name, layout->size, fmt::join(fields, ", "));
}

// A spec tolerance as a td::Tolerance initializer's parts.
support::TemplateData tolerance_item(const ir::Tolerance& t) {
  auto bound = [](const std::optional<double>& v) { return v ? double_literal(*v) : std::string("std::nullopt"); };
  support::TemplateData item;
  item.set("max_abs", bound(t.max_abs));
  item.set("max_rel", bound(t.max_rel));
  item.set("nmse", bound(t.nmse));
  item.set("exact", t.exact ? "true" : "false");
  // td::Tolerance's last member, always written: -Wmissing-field-initializers holds users to it.
  item.set("peak_rel_arg", ", " + bound(t.peak_rel));
  return item;
}

// The kernel's dims for the harness's check(): as a list, "a, b" and "\"a\", \"b\"".
void dims(const ir::Kernel& k, TemplateData& d) {
  TemplateData list{TemplateData::type::list};
  std::vector<std::string> names, strings;
  for (const auto& dim : k.dims) {
    TemplateData item;
    item.set("name", dim.name);
    list.push_back(item);
    names.push_back(dim.name);
    strings.push_back("\"" + dim.name + "\"");
  }
  d.set("dims", list);
  d.set("dim_list", fmt::format("{}", fmt::join(names, ", ")));
  d.set("dim_strings", fmt::format("{}", fmt::join(strings, ", ")));
}

// What the harness header and the programs of kernels and families share.
TemplateData harness_names(const ir::Kernel& k) {
  TemplateData d;
  d.set("kernel", k.name);
  d.set("summary", comment_text(k.summary));
  d.set("class_name", objc_class_name(k));
  d.set("ns", k.names.cpp_namespace);
  dims(k, d);
  return d;
}

void render(const ir::Kernel& k, support::OutputSet& out, TemplateData& d, const std::string& file, const char* tmpl) {
  d.set("banner", banner(k, file));
  out.add(k.names.path(file), support::render_template(tmpl, d));
}

// The glue's encode arguments a harness takes from its case: every buffer at offset 0, the dims,
// and the scalars where the kernel has any (the glue takes none otherwise).
std::vector<SelectorPart> case_arguments(const ir::Kernel& k) {
  std::vector<SelectorPart> parts;
  for (size_t i = 0; i < k.buffers.size(); ++i) {
    parts.push_back({k.names.buffers[i].label, "", fmt::format("buffers[{}]", i)});
    parts.push_back({k.names.buffers[i].offset, "", "0"});
  }
  parts.push_back({"dims", "", "test_data::dims_from(c.dims)"});
  if (!k.scalars.empty()) parts.push_back({"scalars", "", "test_data::scalars_of(c)"});
  return parts;
}

class HarnessWriter {
 public:
  explicit HarnessWriter(const ir::Kernel& k) : k_(k), class_name_(objc_class_name(k)) {}

  void run(support::OutputSet& out) const {
    TemplateData d = harness_names(k_);
    d.set("fallback_args", fallback_args());
    d.set("encode_args", encode_args());
    d.set("references", references());
    render(k_, out, d, k_.names.harness_header, "objc/harness_kernel.h.mustache");
    d.set("what", "kernel");
    for (const std::string program : {"bench", "autotune"}) {
      d.set("program", program);
      d.set("main_function", program + "_main");
      render(k_, out, d, program == "bench" ? k_.names.bench_source : k_.names.autotune_source,
             "objc/harness_main.mm.mustache");
    }
  }

 private:
  // The glue's explicit-tuning encode, every buffer at offset 0.
  TemplateData encode_args() const {
    std::vector<SelectorPart> parts = case_arguments(k_);
    parts.push_back({"types", "", fmt::format("[{} typesOfVariant:variant]", class_name_)});
    parts.push_back({"tuning", "", fmt::format("[{} tuningOfVariant:variant]", class_name_)});
    parts.push_back({"error", "", "error"});
    return aligned(std::string("    return [glue_ encodeToCommandEncoder").size(), parts);
  }

  // The glue created with the fallback tuning table (and the spec's function constants).
  TemplateData fallback_args() const {
    std::vector<SelectorPart> parts;
    if (!k_.function_constants.empty()) parts.push_back({"functionConstants", "", class_name_ + "FunctionConstants{}"});
    parts.push_back({"tuningTable", "", "fallback.get()"});
    parts.push_back({"error", "", "&failure"});
    return aligned(fmt::format("    glue_ = [[{} alloc] initWithLibrary", class_name_).size(), parts);
  }

  // One call of the templated reference per type choice, keyed like types_key().
  TemplateData references() const {
    TemplateData list{TemplateData::type::list};
    std::set<std::string> seen;
    for (const auto& v : k_.variants) {
      std::vector<std::string> key, args, spans;
      for (const auto& t : k_.type_params) {
        key.push_back(fmt::format("{}={}", t.name, ir::info(v.types.at(t.name)).spec_name));
        args.push_back(ir::info(v.types.at(t.name)).cpp);
      }
      const std::string joined = fmt::format("{}", fmt::join(key, ","));
      if (!seen.insert(joined).second) continue;
      for (size_t i = 0; i < k_.buffers.size(); ++i) {
        const auto& b = k_.buffers[i];
        spans.push_back(fmt::format("h::view<{}{}>(buffers[{}])", b.is_output() ? "" : "const ",
                                    ir::info(b.type.resolve(v.types)).cpp, i));
      }
      TemplateData item;
      item.set("key", joined);
      item.set("template_args", args.empty() ? std::string() : fmt::format("<{}>", fmt::join(args, ", ")));
      item.set("spans", support::string_list(spans));
      list.push_back(item);
    }
    return list;
  }

  const ir::Kernel& k_;
  const std::string class_name_;
};

// A family's <family>_harness.h and bench_<family>.mm: it runs as a token runs, every dispatch in
// one encoder, and each dispatch in an encoder of its own to time it.
class FamilyHarnessWriter {
 public:
  explicit FamilyHarnessWriter(const ir::Kernel& k) : k_(k) {}

  void run(support::OutputSet& out) const {
    TemplateData d = harness_names(k_);
    std::vector<std::string> members;
    for (const auto& dispatch : k_.family->dispatches) members.push_back("\"" + dispatch.kernel + "\"");
    d.set("member_strings", fmt::format("{}", fmt::join(members, ", ")));
    d.set("dispatch_count", std::to_string(members.size()));
    d.set("encode_args", glue_args("    return [glue_ encodeToCommandEncoder"));
    d.set("split_args", glue_args("    return [glue_ encodeWithEncoderForDispatch"));
    render(k_, out, d, k_.names.harness_header, "objc/harness_family.h.mustache");
    d.set("what", "family");
    d.set("program", "bench");
    d.set("main_function", "family_bench_main");
    render(k_, out, d, k_.names.bench_source, "objc/harness_main.mm.mustache");
  }

 private:
  // The glue's encode arguments after the encoder, every buffer at offset 0, colons under `call`'s.
  TemplateData glue_args(const std::string& call) const {
    std::vector<SelectorPart> parts = case_arguments(k_);
    parts.push_back({"types", "", "types_of(variant)"});
    parts.push_back({"error", "", "error"});
    return aligned(call.size(), parts);
  }

  const ir::Kernel& k_;
};

// <kernel>_test_data.h: the test cases, buffers, variants and tolerances as plain C++ for the
// shared generator and judge (mtlgen_testdata.h); every input's fill resolved as verify resolves it.
class TestDataWriter {
 public:
  explicit TestDataWriter(const ir::Kernel& k) : k_(k) {}

  void run(support::OutputSet& out) const {
    const std::string& file = k_.names.test_data_header;
    TemplateData d;
    d.set("banner", banner(k_, file));
    d.set("kernel", k_.name);
    d.set("summary", comment_text(k_.summary));
    d.set("ns", k_.names.cpp_namespace);
    d.set("dims", named_list(k_.dims));
    d.set("scalars", named_list(k_.scalars));
    d.set("cases", cases());
    d.set("buffers", buffers());
    d.set("variants", variants());
    d.set("tolerances", tolerances());
    d.set("output_tolerances", output_tolerances());
    out.add(k_.names.path(file), support::render_template("objc/harness_test_data.h.mustache", d));
  }

 private:
  template <typename Named>
  static TemplateData named_list(const std::vector<Named>& all) {
    TemplateData list{TemplateData::type::list};
    for (const auto& x : all) {
      TemplateData item;
      item.set("name", x.name);
      list.push_back(item);
    }
    return list;
  }

  TemplateData cases() const {
    TemplateData list{TemplateData::type::list};
    for (const auto& c : k_.tests.cases) {
      std::vector<std::string> dims, scalars;
      for (const auto& [name, value] : c.dims) dims.push_back(fmt::format("{{\"{}\", {}}}", name, value));
      for (const auto& [name, value] : c.scalars) scalars.push_back(fmt::format("{{\"{}\", {}}}", name, double_literal(value)));
      TemplateData inputs{TemplateData::type::list};
      for (const auto& b : k_.buffers) {
        if (!b.is_host_input()) continue;
        TemplateData input;
        input.set("buffer", b.name);
        input.set("fill", fill(k_.input_fill(c, b.name)));
        inputs.push_back(input);
      }
      TemplateData item;
      item.set("name", c.name);
      item.set("seed", std::to_string(c.seed.value_or(k_.tests.seed)));
      item.set("dims", fmt::format("{}", fmt::join(dims, ", ")));
      item.set("scalars", fmt::format("{}", fmt::join(scalars, ", ")));
      item.set("inputs", inputs);
      item.set("benchmark", c.benchmark);
      list.push_back(item);
    }
    return list;
  }

  TemplateData buffers() const {
    TemplateData list{TemplateData::type::list};
    for (const auto& b : k_.buffers) {
      TemplateData item;
      item.set("name", b.name);
      item.set("dtype", b.type.concrete ? "mtlgen::DType::" + dtype(*b.type.concrete) : "types." + b.type.param);
      item.set("input", b.is_host_input() ? "true" : "false");
      item.set("output", b.is_output() ? "true" : "false");
      item.set("host_visible", b.host_visible ? "true" : "false");
      item.set("fill", b.is_host_input() ? fmt::format("fill(\"{}\")", b.name) : std::string("td::Fill{}"));
      item.set("block", block_layout(k_.block_of(b)));
      list.push_back(item);
    }
    return list;
  }

  // `types.T = mtlgen::DType::f16`, `tuning.TG = 256`: one line per compiled variant.
  TemplateData variants() const {
    TemplateData list{TemplateData::type::list};
    for (const auto& v : k_.variants) {
      std::vector<std::string> assignments;
      for (const auto& [name, type] : v.types) assignments.push_back(fmt::format("types.{} = mtlgen::DType::{}", name, dtype(type)));
      for (const auto& [name, value] : v.tunables) assignments.push_back(fmt::format("tuning.{} = {}", name, value));
      TemplateData item;
      item.set("assignments", support::string_list(assignments));
      list.push_back(item);
    }
    return list;
  }

  // The spec's tolerances by element type; others fall back to td::default_tolerance.
  TemplateData tolerances() const {
    TemplateData list{TemplateData::type::list};
    std::set<std::string> seen;
    for (const auto& [type, t] : k_.tests.tolerances) {
      if (!seen.insert(dtype(type)).second) continue;
      TemplateData item = tolerance_item(t);
      item.set("dtype", dtype(type));
      list.push_back(item);
    }
    return list;
  }

  // An output's own tolerance, which wins over its type's.
  TemplateData output_tolerances() const {
    TemplateData list{TemplateData::type::list};
    for (const auto& [name, t] : k_.tests.output_tolerances) {
      TemplateData item = tolerance_item(t);
      item.set("name", name);
      list.push_back(item);
    }
    return list;
  }

  const ir::Kernel& k_;
};

// Kernels get a metallib entry and their programs; families their glue, reference and bench program.
TemplateData build_data(const std::vector<ir::Kernel>& kernels) {
  TemplateData list{TemplateData::type::list}, families{TemplateData::type::list};
  for (const auto& k : kernels) {
    TemplateData item;
    item.set("kernel", k.name);
    item.set("class_name", objc_class_name(k));
    item.set("msl_version", k.msl_version);
    (k.is_family() ? families : list).push_back(item);
  }
  TemplateData d;
  d.set("kernels", list);
  d.set("families", families);
  d.set("banner", hash_comments(library_banner("CMakeLists.txt")));
  return d;
}

}  // namespace

// A family's tunings are its kernels': it has a bench program, timing its token and each
// dispatch, but no autotune program of its own.
void emit_harness(const ir::Kernel& kernel, support::OutputSet& out) {
  TestDataWriter(kernel).run(out);
  if (kernel.is_family()) {
    FamilyHarnessWriter(kernel).run(out);
  } else {
    HarnessWriter(kernel).run(out);
  }
}

void emit_harness_support(const std::vector<ir::Kernel>& kernels, support::OutputSet& out) {
  for (const char* name : {"mtlgen_harness.h", "mtlgen_harness.mm"}) {
    TemplateData d;
    d.set("banner", library_banner(name));
    const std::string tmpl = std::string("objc/harness_support") + (std::string(name).ends_with(".h") ? ".h" : ".mm");
    out.add(std::string("support/") + name, support::render_template(tmpl + ".mustache", d));
  }
  out.add("CMakeLists.txt", support::render_template("objc/build.cmake.mustache", build_data(kernels)));
}

}  // namespace mtlgen::emit
