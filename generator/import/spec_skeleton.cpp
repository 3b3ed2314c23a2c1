#include "import/spec_skeleton.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <set>

#include "ir/types.h"
#include "spec/source_binding.h"
#include "support/templates.h"
#include "support/text.h"
#include "support/version.h"

namespace mtlgen::import {
namespace fs = std::filesystem;
using msl::AddressSpace;
using msl::EntryPoint;
using msl::KernelParam;
using msl::ParamKind;

namespace {

// yaml-cpp decides the quoting, so names and texts read back exactly as written.
std::string yaml_scalar(const std::string& text) {
  YAML::Emitter out;
  out << text;
  return out.c_str();
}

std::string quoted(const std::string& text) {
  YAML::Emitter out;
  out << YAML::DoubleQuoted << text;
  return out.c_str();
}

std::string todo(const std::string& what) { return quoted("TODO: " + what); }

// A spec name from a host name: identifier characters kept, anything else `_`.
std::string spec_name(const std::string& host_name) {
  std::string name;
  for (char c : host_name) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name.insert(0, "k_");
  return name.substr(0, 64);
}

std::optional<int64_t> integer_literal(const std::string& text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// The spec's element type for a C type, or nothing for a struct (shapes then count bytes).
std::optional<std::string> spec_type(const std::string& c_type) {
  ir::ScalarType t = spec::element_scalar_type(c_type);
  if (t == ir::ScalarType::bytes) return std::nullopt;
  return ir::info(t).spec_name;
}

// A template argument a spec's type parameter can take: a scalar element type. Vectors keep
// their type (`float4` is not `float`: a kernel instantiated with both would make two entries
// with one key), so they are fixed arguments like functors (`ArgMax<float>`) and functions.
bool is_type_argument(const std::string& value) {
  return spec_type(value) && spec::c_value_kind(value) != spec::ValueKind::none;
}

// Each value once, in the order of first appearance (instantiations list `float` before `half`).
std::vector<std::string> distinct(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const auto& v : values) {
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

bool is_float_type(const std::string& c_type) { return spec::c_value_kind(c_type) == spec::ValueKind::floating; }

// `const device SSBO& _46` where SSBO ends in an array: SPIRV-Cross's struct-wrapped buffer.
const msl::FieldLayout* wrapped_array(const KernelParam& p) {
  if (!p.layout || !p.is_reference || p.address_space != AddressSpace::device) return nullptr;
  if (p.layout->fields.empty() || p.layout->fields.back().array_count == 0) return nullptr;
  return &p.layout->fields.back();
}

bool is_argument_struct(const KernelParam& p) {
  return p.layout && !p.is_pointer && !wrapped_array(p) && (p.address_space == AddressSpace::constant || p.is_const);
}

bool is_scalar_reference(const KernelParam& p) {
  return p.is_reference && !p.layout && p.address_space == AddressSpace::constant &&
         spec::c_value_kind(p.element_type) != spec::ValueKind::none;
}

// One value of an argument struct the host writes: `args.ne00`, `args.inner.x`, `args.nb[2]`.
struct ArgumentLeaf {
  std::string field;  // path below the parameter
  std::string type;
  uint64_t offset = 0;
  bool top_level = true;
};

void flatten(const msl::FieldLayout& f, const std::string& path, uint64_t base, bool top, std::vector<ArgumentLeaf>& out) {
  uint64_t count = f.array_count ? f.array_count : 1;
  uint64_t stride = f.size / count;
  for (uint64_t i = 0; i < count; ++i) {
    std::string name = f.array_count ? fmt::format("{}[{}]", path, i) : path;
    uint64_t offset = base + f.offset + i * stride;
    if (f.fields.empty()) {
      out.push_back({name, f.type, offset, top && !f.array_count});
      continue;
    }
    for (const auto& sub : f.fields) flatten(sub, name + "." + sub.name, offset, false, out);
  }
}

// Lines of one spec section; `comment` lands after the line, aligned by nothing but two spaces.
struct Section {
  std::vector<std::string> lines;
  void add(std::string line, const std::string& comment = {}) {
    lines.push_back(comment.empty() ? std::move(line) : line + "  # " + comment);
  }
};

class SkeletonWriter {
 public:
  SkeletonWriter(const msl::Unit& unit, std::vector<const EntryPoint*> entries, std::string name,
                 const SkeletonOptions& options)
      : unit_(unit), entries_(std::move(entries)), name_(std::move(name)), options_(options), first_(*entries_.front()) {}

  Skeleton write() {
    plan_template_params();
    classify_params();
    support::TemplateData data;
    data.set("source_display", options_.source_display);
    data.set("version", kVersion);
    data.set("name", yaml_scalar(name()));
    data.set("summary", todo(fmt::format("what {} computes, in one line", name())));
    data.set("source", yaml_scalar(relative_source()));
    data.set("header", support::string_list(header_comments()));
    data.set("lines", support::string_list(body_lines()));
    Skeleton s;
    s.file_name = name() + ".yaml";
    s.text = support::render_template("import/spec_skeleton.yaml.mustache", data);
    for (size_t at = s.text.find("\"TODO: "); at != std::string::npos; at = s.text.find("\"TODO: ", at + 1)) {
      ++s.placeholders;
    }
    return s;
  }

 private:
  struct TemplateParam {
    std::string name;
    std::vector<std::string> values;  // per entry
    bool is_type = true;
    bool varies = false;
  };

  const std::string& name() const { return name_; }

  std::string relative_source() const {
    std::error_code ec;
    fs::path from = fs::weakly_canonical(fs::absolute(options_.output_dir), ec);
    fs::path to = fs::weakly_canonical(fs::absolute(options_.source), ec);
    fs::path rel = to.lexically_relative(from);
    return (rel.empty() ? to : rel).generic_string();
  }

  void plan_template_params() {
    for (size_t i = 0; i < first_.template_args.size(); ++i) {
      TemplateParam tp;
      tp.name = first_.template_args[i].name.empty() ? fmt::format("P{}", i) : first_.template_args[i].name;
      for (const EntryPoint* e : entries_) {
        std::string v = i < e->template_args.size() ? e->template_args[i].value : "";
        tp.is_type = tp.is_type && is_type_argument(v);
        tp.varies = tp.varies || v != first_.template_args[i].value;
        tp.values.push_back(v);
      }
      template_params_.push_back(std::move(tp));
    }
  }

  void classify_params() {
    for (size_t i = 0; i < first_.params.size(); ++i) {
      const KernelParam& p = first_.params[i];
      if (p.kind == ParamKind::builtin) builtins_.push_back(&p);
      else if (p.kind == ParamKind::threadgroup) threadgroup_.push_back(i);
      else if (p.kind == ParamKind::texture_or_other) unsupported_.push_back(&p);
      else if (is_argument_struct(p)) argument_structs_.push_back(&p);
      else if (is_scalar_reference(p) && is_float_type(p.element_type)) scalars_.push_back({p.name, p.element_type});
      else if (is_scalar_reference(p)) dims_.push_back(p.name);
      else buffers_.push_back(i);
    }
    for (const KernelParam* p : argument_structs_) {
      for (const auto& f : p->layout->fields) flatten(f, f.name, 0, true, leaves_[p->name]);
      for (const auto& leaf : leaves_[p->name]) {
        if (leaf.top_level && spec_type(leaf.type) == "float") scalars_.push_back({leaf.field, leaf.type});
      }
    }
  }

  // The element type of parameter `i` in every entry: a type parameter's name when it follows
  // one, else the type all entries share; nothing for structs and disagreements.
  std::optional<std::string> element_spelling(size_t i) const {
    std::vector<std::string> types;
    for (const EntryPoint* e : entries_) {
      auto t = spec_type(e->params[i].element_type);
      if (!t) return std::nullopt;
      types.push_back(*t);
    }
    for (const auto& tp : template_params_) {
      if (!tp.is_type || !tp.varies) continue;
      bool follows = true;
      for (size_t k = 0; k < types.size(); ++k) follows = follows && spec_type(tp.values[k]) == types[k];
      if (follows) return tp.name;
    }
    if (std::all_of(types.begin(), types.end(), [&](const auto& t) { return t == types[0]; })) return types[0];
    return std::nullopt;
  }

  std::vector<std::string> header_comments() const {
    std::vector<std::string> out;
    for (const KernelParam* p : builtins_) {
      out.push_back(fmt::format("builtin {} {} [[{}]]", p->builtin_type, p->name, p->builtin_attribute));
    }
    for (const KernelParam* p : unsupported_) {
      out.push_back(fmt::format("{} {}: textures, samplers and stage_in cannot be simulated yet", p->type, p->name));
    }
    if (first_.max_total_threads_per_threadgroup) {
      out.push_back(fmt::format("[[max_total_threads_per_threadgroup({})]]", *first_.max_total_threads_per_threadgroup));
    }
    return out;
  }

  std::vector<std::string> body_lines() const {
    std::vector<std::string> out;
    for (const Section& s : {types_section(), entries_section(), dims_section(), tunables_section(), buffers_section(),
                             scalars_section(), arguments_section(), threadgroup_section(), dispatch_section(),
                             reference_section(), tests_section()}) {
      out.insert(out.end(), s.lines.begin(), s.lines.end());
    }
    return out;
  }

  Section types_section() const {
    Section s;
    for (const auto& tp : template_params_) {
      if (!tp.is_type) continue;
      if (s.lines.empty()) s.add("types:");
      std::vector<std::string> types;
      for (const auto& v : tp.values) types.push_back(*spec_type(v));
      s.add(fmt::format("  {}: [{}]", tp.name, fmt::join(distinct(types), ", ")));
    }
    return s;
  }

  Section entries_section() const {
    Section s;
    if (template_params_.empty()) {
      s.add(fmt::format("entries: [{}]", yaml_scalar(first_.host_name)));
      return s;
    }
    s.add("entries:", "host names of the instantiations, with their template arguments");
    for (size_t k = 0; k < entries_.size(); ++k) {
      std::vector<std::string> values;
      std::vector<std::string> fixed;
      for (const auto& tp : template_params_) {
        if (tp.is_type) values.push_back(fmt::format("{}: {}", tp.name, *spec_type(tp.values[k])));
        else if (tp.varies && integer_literal(tp.values[k])) values.push_back(fmt::format("{}: {}", tp.name, tp.values[k]));
        else fixed.push_back(fmt::format("{} = {}", tp.name, tp.values[k]));
      }
      std::string comment = fixed.empty() ? "" : fmt::format("{} in the instantiation", fmt::join(fixed, ", "));
      s.add(fmt::format("  {}: {{{}}}", yaml_scalar(entries_[k]->host_name), fmt::join(values, ", ")), comment);
    }
    return s;
  }

  Section dims_section() const {
    Section s;
    if (dims_.empty()) {
      s.add(fmt::format("dims: {}", todo("the sizes shapes, dispatch and reference are written in, e.g. {n: {min: 1}}")));
      return s;
    }
    s.add("dims:", "`constant` integer parameters are bound to the dim of their name");
    for (const auto& d : dims_) s.add(fmt::format("  {}: {{min: 1}}", yaml_scalar(d)));
    return s;
  }

  Section tunables_section() const {
    Section s;
    for (const auto& tp : template_params_) {
      if (tp.is_type || !tp.varies || !integer_literal(tp.values[0])) continue;
      if (s.lines.empty()) s.add("tunables:");
      std::vector<std::string> values = distinct(tp.values);
      s.add(fmt::format("  {}: {{values: [{}], default: {}}}", tp.name, fmt::join(values, ", "), values[0]),
            "instantiated values");
    }
    return s;
  }

  Section buffers_section() const {
    Section s;
    if (buffers_.empty()) return s;
    s.add("buffers:", "element type, access and index come from the source");
    for (size_t i : buffers_) {
      const KernelParam& p = first_.params[i];
      std::vector<std::string> fields;
      if (const msl::FieldLayout* array = wrapped_array(p)) {
        if (auto t = spec_type(array->type)) fields.push_back("type: " + *t);
      }
      fields.push_back("shape: " + todo(fmt::format("the elements of `{}`, e.g. [n]", p.name)));
      std::string comment = buffer_comment(i);
      if (!p.is_const) {
        fields.push_back("access: read_write");
        comment += "; say `access: write` if the kernel never reads it (unwritten elements are then reported)";
      }
      s.add(fmt::format("  {}: {{{}}}", yaml_scalar(p.name), fmt::join(fields, ", ")), comment);
    }
    return s;
  }

  std::string buffer_comment(size_t i) const {
    const KernelParam& p = first_.params[i];
    std::string comment = p.type;
    auto spelled = element_spelling(i);
    if (!spelled && !wrapped_array(p)) comment += " (a struct: the shape counts bytes)";
    if (spec_type(p.element_type) == "int8") comment += " (int8 elements; `type: uint8` reads raw bytes)";
    if (!p.function_constant.empty()) {
      comment += fmt::format("; bound only when `{}` is true (leave it out to pass null)", p.function_constant);
    }
    return comment;
  }

  Section scalars_section() const {
    Section s;
    if (scalars_.empty()) return s;
    s.add("scalars:", "`constant` float values are bound to the scalar of their name");
    for (const auto& [n, type] : scalars_) {
      s.add(fmt::format("  {}: {{type: float, default: {}}}", yaml_scalar(n), todo("a typical value")), type);
    }
    return s;
  }

  Section arguments_section() const {
    Section s;
    for (const KernelParam* p : argument_structs_) {
      if (s.lines.empty()) s.add("arguments:", "bytes of each argument struct, laid out as Metal does");
      s.add(fmt::format("  {}:", yaml_scalar(p->name)), fmt::format("{} ({} bytes)", p->type, p->layout->size));
      for (const auto& leaf : leaves_.at(p->name)) {
        bool floating = is_float_type(leaf.type);
        if (floating && leaf.top_level && spec_type(leaf.type) == "float") continue;  // a scalar of that name
        std::string what = floating ? "the name of a spec scalar" : "an integer expression of dims and tunables";
        s.add(fmt::format("    {}: {}", yaml_scalar(leaf.field), todo(what)),
              fmt::format("{} at byte {}", leaf.type, leaf.offset));
      }
    }
    return s;
  }

  Section threadgroup_section() const {
    Section s;
    if (threadgroup_.empty()) return s;
    s.add("threadgroup_memory:", "threadgroup pointer parameters: the host sets their lengths");
    for (size_t i : threadgroup_) {
      const KernelParam& p = first_.params[i];
      auto spelled = element_spelling(i);
      std::string type = spelled ? *spelled : todo("the element type");
      s.add(fmt::format("  {}: {{type: {}, count: {}}}", yaml_scalar(p.name), type,
                        todo("elements, an expression of tunables")),
            p.type);
    }
    return s;
  }

  Section dispatch_section() const {
    Section s;
    s.add("dispatch:");
    s.add("  threadgroups: " + todo("threadgroups per grid dimension, expressions of dims and tunables, e.g. "
                                    "[\"ceil_div(n, 64)\"]"));
    std::string limit = first_.max_total_threads_per_threadgroup
                            ? fmt::format("at most {} (the kernel's attribute)", *first_.max_total_threads_per_threadgroup)
                            : "at most 1024";
    s.add("  threads_per_threadgroup: " + todo("threads per threadgroup, e.g. [64]"), limit);
    return s;
  }

  Section reference_section() const {
    std::vector<std::string> outputs;
    std::vector<std::string> inputs;
    for (size_t i : buffers_) (first_.params[i].is_const ? inputs : outputs).push_back(first_.params[i].name);
    for (const auto& d : dims_) inputs.push_back(d);
    for (const auto& sc : scalars_) inputs.push_back(sc.first);
    Section s;
    s.add("reference: " + todo(fmt::format("serial C++ that computes {} from {} (docs/spec-format.md#reference)",
                                           outputs.empty() ? "the outputs" : fmt::format("{}", fmt::join(outputs, ", ")),
                                           inputs.empty() ? "the inputs" : fmt::format("{}", fmt::join(inputs, ", ")))));
    return s;
  }

  Section tests_section() const {
    Section s;
    s.add("tests:");
    std::vector<std::string> constants;
    for (const auto& fc : unit_.function_constants()) {
      if (!uses_constant(fc.name)) continue;
      std::string values = fc.type == "bool" ? "[false, true]" : todo("the values to test, e.g. [0, 1]");
      constants.push_back(fmt::format("{}: {}", yaml_scalar(fc.name), values));
    }
    if (!constants.empty()) {
      s.add(fmt::format("  constants: {{{}}}", fmt::join(constants, ", ")), "the function constants it reads");
    }
    s.add("  cases:");
    s.add("    - name: small");
    if (dims_.empty()) {
      s.add("      dims: " + todo("a value for every dim"));
      return s;
    }
    std::vector<std::string> values;
    for (const auto& d : dims_) values.push_back(fmt::format("{}: {}", yaml_scalar(d), todo("a small size")));
    s.add(fmt::format("      dims: {{{}}}", fmt::join(values, ", ")));
    return s;
  }

  bool uses_constant(const std::string& name) const {
    return std::any_of(entries_.begin(), entries_.end(), [&](const EntryPoint* e) {
      return std::find(e->function_constants.begin(), e->function_constants.end(), name) != e->function_constants.end();
    });
  }

  const msl::Unit& unit_;
  std::vector<const EntryPoint*> entries_;
  std::string name_;
  const SkeletonOptions& options_;
  const EntryPoint& first_;
  std::vector<TemplateParam> template_params_;
  std::vector<const KernelParam*> builtins_;
  std::vector<const KernelParam*> unsupported_;
  std::vector<const KernelParam*> argument_structs_;
  std::vector<size_t> buffers_;
  std::vector<size_t> threadgroup_;
  std::vector<std::string> dims_;
  std::vector<std::pair<std::string, std::string>> scalars_;  // name, C type
  std::map<std::string, std::vector<ArgumentLeaf>> leaves_;
};

// A single entry is named by its host name, a template's instantiations by the function.
std::string group_name(const std::vector<const EntryPoint*>& group) {
  return spec_name(group.size() == 1 ? group[0]->host_name : group[0]->function);
}

// Whether the `i`th template argument of `group` is one a spec states (a type parameter or an
// integer tunable, as SkeletonWriter plans them): then it tells the group's entries apart.
bool states_argument(const std::vector<const EntryPoint*>& group, size_t i) {
  bool types = true, integers = true;
  for (const EntryPoint* e : group) {
    const std::string v = i < e->template_args.size() ? e->template_args[i].value : "";
    types = types && is_type_argument(v);
    integers = integers && integer_literal(v).has_value();
  }
  return types || integers;
}

// A group split by the template arguments no spec states (`ArgMax<float>` against
// `ArgMin<float>`, ggml's dequantize functions, `float4` against `float`): entries that differ
// only there would share one key, so each value gets its own skeleton.
std::vector<std::vector<const EntryPoint*>> split_by_fixed_arguments(const std::vector<const EntryPoint*>& group) {
  std::vector<size_t> fixed;
  for (size_t i = 0; i < group.front()->template_args.size(); ++i)
    if (!states_argument(group, i)) fixed.push_back(i);
  std::vector<std::vector<const EntryPoint*>> parts;
  std::map<std::vector<std::string>, size_t> index;
  for (const EntryPoint* e : group) {
    std::vector<std::string> key;
    for (size_t i : fixed) key.push_back(i < e->template_args.size() ? e->template_args[i].value : "");
    auto [it, fresh] = index.emplace(key, parts.size());
    if (fresh) parts.emplace_back();
    parts[it->second].push_back(e);
  }
  return parts;
}

// Entry points grouped by kernel function, in the order the file first instantiates them; a
// function's group is split where its entries differ only in arguments no spec states.
std::vector<std::vector<const EntryPoint*>> group_by_function(const msl::Unit& unit) {
  std::vector<std::vector<const EntryPoint*>> by_function;
  std::map<std::string, size_t> index;
  for (const auto& ep : unit.entry_points()) {
    auto [it, fresh] = index.emplace(ep.function, by_function.size());
    if (fresh) by_function.emplace_back();
    by_function[it->second].push_back(&ep);
  }
  std::vector<std::vector<const EntryPoint*>> groups;
  for (const auto& group : by_function)
    for (auto& part : split_by_fixed_arguments(group)) groups.push_back(std::move(part));
  return groups;
}

}  // namespace

std::vector<Skeleton> spec_skeletons(const msl::Unit& unit, const SkeletonOptions& options,
                                     support::Diagnostics& diags) {
  std::vector<Skeleton> out;
  if (!options.entry.empty()) {
    const EntryPoint* ep = unit.find(options.entry);
    if (!ep) {
      std::vector<std::string> names;
      for (const auto& e : unit.entry_points()) names.push_back(e.host_name);
      std::string close = support::did_you_mean(options.entry, names);
      diags.error(support::ErrorKind::undefined_symbol, {options.source_display, 0, 0},
                  fmt::format("no entry point `{}` in this file", options.entry),
                  close.empty() ? fmt::format("its entry points are: {}", fmt::join(names, ", "))
                                : fmt::format("did you mean `{}`?", close));
      return out;
    }
    out.push_back(SkeletonWriter(unit, {ep}, group_name({ep}), options).write());
    return out;
  }
  std::set<std::string> taken;
  const auto groups = group_by_function(unit);
  std::map<std::string, int> groups_of_function;
  for (const auto& group : groups) ++groups_of_function[group[0]->function];
  for (const auto& group : groups) {
    // A split function's skeletons are named by their first entry (`argmax_f32`, `argmin_f32`).
    std::string name = groups_of_function[group[0]->function] > 1 ? spec_name(group[0]->host_name) : group_name(group);
    for (int n = 2; !taken.insert(name).second; ++n) name = fmt::format("{}_{}", group_name(group), n);
    out.push_back(SkeletonWriter(unit, group, name, options).write());
  }
  return out;
}

}  // namespace mtlgen::import
