#include "emit_objc/family_glue.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>

#include "emit_common/cpp_text.h"
#include "emit_common/emitter.h"
#include "emit_objc/objc_emitter.h"
#include "emit_objc/objc_text.h"
#include "support/text.h"

namespace mtlgen::emit {

namespace {

using support::TemplateData;

// The block that gives each dispatch its compute encoder, as the glue's parameters spell it.
constexpr const char* kEncoderBlock = "id<MTLComputeCommandEncoder> _Nullable (^)(NSUInteger dispatch)";

bool reads(ir::Access a) { return a != ir::Access::write; }
bool writes(ir::Access a) { return a != ir::Access::read; }

// `a`, `a and b`, `a, b and c`.
std::string spoken_list(const std::vector<std::string>& items) {
  if (items.size() < 2) return items.empty() ? "" : items.front();
  std::vector<std::string> head(items.begin(), items.end() - 1);
  return fmt::format("{} and {}", fmt::join(head, ", "), items.back());
}

class FamilyWriter {
 public:
  explicit FamilyWriter(const ir::Kernel& k)
      : k_(k), f_(*k.family), camel_(k.names.camel), class_name_(k.names.objc_class),
        facade_class_(k.names.facade_class), stems_(k.names.dispatch_locals) {}

  void run(support::OutputSet& out) const {
    TemplateData d = names();
    d.set("members", members());
    type_choices(d);
    d.set("buffer_docs", buffer_docs());
    d.set("intermediates", intermediates());
    d.set("has_intermediates", std::any_of(k_.buffers.begin(), k_.buffers.end(), [](const ir::Buffer& b) { return b.intermediate; }));
    d.set("buffer_checks", buffer_checks());
    encode_signature(d);
    const auto barriers = family_barriers(f_);
    d.set("dispatches", dispatches(barriers));
    facade(d);
    render(out, d, k_.names.objc_header, "objc/family.h.mustache");
    render(out, d, k_.names.objc_source, "objc/family.mm.mustache");
    render(out, d, k_.names.facade_header, "objc/family_facade.h.mustache");
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
    std::vector<std::string> order;
    for (const auto& dispatch : f_.dispatches) order.push_back(dispatch.kernel);
    d.set("dispatch_order", fmt::format("{}", fmt::join(order, ", then ")));
    d.set("dispatch_count", std::to_string(f_.dispatches.size()));
    d.set("last_index", std::to_string(f_.dispatches.size() - 1));
    d.set("variant_axes", variant_axes());
    bool computed = false;
    for (const auto& dispatch : f_.dispatches) {
      for (const auto& b : dispatch.dims) computed = computed || b.written;
    }
    d.set("has_computed_dims", computed);
    d.set("has_scalars", !k_.scalars.empty());
    d.set("scalars_value", k_.scalars.empty() ? "family::Scalars{}" : "scalars");
    return d;
  }

  std::string variant_axes() const {
    std::vector<std::string> axes;
    for (const auto& t : k_.type_params) {
      std::vector<std::string> names;
      for (auto type : t.types) names.push_back(ir::info(type).spec_name);
      axes.push_back(fmt::format("{} in {{{}}}", t.name, fmt::join(names, ", ")));
    }
    return axes.empty() ? "no type parameters" : fmt::format("{}", fmt::join(axes, " x "));
  }

  // The family's kernels: the objects it holds, as properties and initializer arguments.
  TemplateData members() const {
    TemplateData list{TemplateData::type::list};
    for (const auto& m : f_.kernels) {
      TemplateData item;
      const std::string& property = m.names.property;
      item.set("kernel", m.name);
      item.set("class_name", objc_class_name(m));
      item.set("property", property);
      item.set("has_function_constants", !m.function_constants.empty());
      const size_t column = fmt::format("  {0}* {1} = [[{0} alloc] initWithLibrary", objc_class_name(m), property).size();
      item.set("constants_pad", std::string(column - std::string("functionConstants").size(), ' '));
      item.set("table_pad", std::string(column - std::string("tuningTable").size(), ' '));
      item.set("error_pad", std::string(column - std::string("error").size(), ' '));
      list.push_back(item);
    }
    return list;
  }

  void type_choices(TemplateData& d) const {
    std::vector<std::string> choices;
    for (const auto& v : k_.variants) {
      std::vector<std::string> fields;
      for (const auto& t : k_.type_params) fields.push_back(fmt::format("mtlgen::DType::{}", ir::info(v.types.at(t.name)).suffix));
      std::string choice = fmt::format("{}", fmt::join(fields, ", "));
      if (std::find(choices.begin(), choices.end(), choice) == choices.end()) choices.push_back(choice);
    }
    d.set("type_choices", support::string_list(choices));
    d.set("type_choice_count", std::to_string(choices.size()));
    std::vector<std::string> same, key, example;
    for (const auto& t : k_.type_params) {
      same.push_back(fmt::format("choice.{0} == types.{0}", t.name));
      key.push_back(fmt::format("\"{}{}=\" + std::string(mtlgen::dtype_name(types.{}))", key.empty() ? "" : ",", t.name, t.name));
      example.push_back(fmt::format("{}={}", t.name, ir::info(k_.variants.front().types.at(t.name)).spec_name));
    }
    d.set("same_types", same.empty() ? std::string("true") : fmt::format("{}", fmt::join(same, " && ")));
    d.set("types_key", key.empty() ? std::string("std::string()") : fmt::format("{}", fmt::join(key, " + ")));
    d.set("types_key_example", example.empty() ? std::string("\"\" (no type parameters)")
                                                : fmt::format("\"{}\"", fmt::join(example, ",")));
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

  TemplateData intermediates() const {
    TemplateData list{TemplateData::type::list};
    for (const auto& b : k_.buffers) {
      if (!b.intermediate) continue;
      TemplateData item;
      item.set("name", b.name);
      item.set("label", label_of(b.name));
      item.set("describe", describe_buffer(b));
      item.set("element_size", element_size(b.type));
      const std::string method = "+ (NSUInteger)" + label_of(b.name) + "LengthForDims";
      item.set("types_pad", std::string(method.size() - std::string("types").size(), ' '));
      list.push_back(item);
    }
    return list;
  }

  TemplateData buffer_checks() const {
    TemplateData list{TemplateData::type::list};
    for (const auto& b : k_.buffers) {
      TemplateData item;
      item.set("name", b.name);
      item.set("label", label_of(b.name));
      item.set("element_size", element_size(b.type));
      item.set("elements", fmt::format("family::{}_elements(dims, {{}}, types)", b.name));
      item.set("alignment", b.alignment ? fmt::format(", {}", b.alignment) : std::string());
      list.push_back(item);
    }
    return list;
  }

  void encode_signature(TemplateData& d) const {
    std::vector<SelectorPart> parts;
    for (const auto& b : k_.names.buffers) {
      parts.push_back({b.label, "id<MTLBuffer>", b.label});
      parts.push_back({b.offset, "NSUInteger", b.offset});
    }
    for (const char* s : {"Dims", "Scalars", "Types"}) {
      if (k_.scalars.empty() && std::string(s) == "Scalars") continue;  // no scalars, no parameter
      std::string name = support::lower_ascii(s);
      parts.push_back({name, fmt::format("const {}{}&", class_name_, s), name});
    }
    parts.push_back({"error", "NSError**", "error"});
    d.set("encode_params", aligned(std::string("- (BOOL)encodeToCommandEncoder").size(), parts));
    d.set("encoder_block", kEncoderBlock);
    d.set("encoder_block_param", "id<MTLComputeCommandEncoder> _Nullable (^encoderForDispatch)(NSUInteger dispatch)");
    d.set("split_params", aligned(std::string("- (BOOL)encodeWithEncoderForDispatch").size(), parts));
    // Both public calls forward to one method, which takes the encoders as a block and whether to
    // end each after its dispatch.
    std::vector<SelectorPart> private_parts = {{"encoderForDispatch", kEncoderBlock, "encoderForDispatch"}};
    private_parts.insert(private_parts.end(), parts.begin(), parts.end());
    d.set("private_params", aligned(std::string("- (BOOL)encodeSplit").size(), private_parts));
    std::vector<SelectorPart> forward;
    for (const SelectorPart& p : private_parts) forward.push_back({p.label, "", p.value});
    const size_t column = std::string("  return [self encodeSplit").size();
    d.set("split_forward", aligned(column, forward));
    forward.front().value = "^id<MTLComputeCommandEncoder>(NSUInteger) { return encoder; }";
    d.set("shared_forward", aligned(column, forward));
  }

  TemplateData dispatches(const std::vector<std::vector<BarrierBuffer>>& barriers) const {
    TemplateData list{TemplateData::type::list};
    for (size_t i = 0; i < f_.dispatches.size(); ++i) {
      const ir::FamilyDispatch& dispatch = f_.dispatches[i];
      const ir::Kernel& m = f_.kernel_of(dispatch);
      TemplateData item;
      item.set("number", std::to_string(i + 1));
      item.set("member", m.name);
      item.set("member_camel", m.names.camel);
      item.set("member_ns", m.names.cpp_namespace);
      item.set("property", m.names.property);
      item.set("struct", k_.names.dispatch_structs[i]);
      const std::string open = fmt::format("{0} Make{0}(", k_.names.dispatch_structs[i]);
      item.set("make_pad", std::string(open.size(), ' '));
      item.set("var", stems_[i]);
      item.set("label", fmt::format("dispatch {} ({})", i + 1, m.name));
      item.set("make_lines", support::string_list(make_lines(dispatch, m, i)));
      item.set("member_checks", member_checks(dispatch, m, stems_[i]));
      item.set("encode_args", encode_args(dispatch, m, stems_[i]));
      item.set("first", i == 0);
      item.set("index", std::to_string(i));
      barrier(item, barriers[i], m);
      list.push_back(item);
    }
    return list;
  }

  // The body of Make<Stem>Dispatch: the member's dims, scalars and types from the family's.
  std::vector<std::string> make_lines(const ir::FamilyDispatch& dispatch, const ir::Kernel& m, size_t i) const {
    std::vector<const expr::Expr*> computed;
    for (const auto& b : dispatch.dims) {
      if (b.written) computed.push_back(&b.value);
    }
    std::vector<std::string> lines = host_locals(k_, computed);
    const std::string var = "dispatch";
    lines.push_back(fmt::format("{} {};", k_.names.dispatch_structs[i], var));
    for (const auto& b : dispatch.dims) {
      lines.push_back(b.written ? fmt::format("{}.dims.{} = MemberDim({}, \"dispatch {} ({})\", \"{}\");", var, b.member,
                                              host_expr(b.value), i + 1, m.name, b.member)
                                : fmt::format("{}.dims.{} = dims.{};", var, b.member, b.member));
    }
    for (const auto& b : dispatch.scalars) lines.push_back(fmt::format("{}.scalars.{} = scalars.{};", var, b.member, b.family));
    for (const auto& b : dispatch.types) {
      const bool family_param = std::any_of(k_.type_params.begin(), k_.type_params.end(),
                                            [&](const ir::TypeParam& t) { return t.name == b.family; });
      const std::string value = family_param ? "types." + b.family
                                             : fmt::format("mtlgen::DType::{}", ir::info(*ir::scalar_type_from_spec(b.family)).suffix);
      lines.push_back(fmt::format("{}.types.{} = {};", var, b.member, value));
    }
    lines.push_back("return " + var + ";");
    return lines;
  }

  // The member's buffer checks, under the family's buffer names, made before anything is encoded.
  TemplateData member_checks(const ir::FamilyDispatch& dispatch, const ir::Kernel& m, const std::string& var) const {
    TemplateData list{TemplateData::type::list};
    for (const auto& mb : m.buffers) {
      const std::string& name = ir::Family::bound(dispatch.buffers, mb.name);
      TemplateData item;
      item.set("name", name);
      item.set("label", label_of(name));
      item.set("element_size", element_size(mb.type, var + ".types"));
      item.set("elements", fmt::format("{0}::{1}_elements({2}.dims, {2}.tuning, {2}.types)", m.names.cpp_namespace, mb.name, var));
      item.set("alignment", mb.alignment ? fmt::format(", {}", mb.alignment) : std::string());
      list.push_back(item);
    }
    return list;
  }

  // The member's encode call: its buffers bound to the family's, then the resolved arguments.
  TemplateData encode_args(const ir::FamilyDispatch& dispatch, const ir::Kernel& m, const std::string& var) const {
    std::vector<SelectorPart> args;
    for (size_t j = 0; j < m.buffers.size(); ++j) {
      const std::string family = label_of(ir::Family::bound(dispatch.buffers, m.buffers[j].name));
      args.push_back({m.names.buffers[j].label, "", family});
      args.push_back({m.names.buffers[j].offset, "", family + "Offset"});
    }
    for (const char* s : {"dims", "scalars", "types", "tuning"}) {
      if (!m.scalars.empty() || std::string(s) != "scalars") args.push_back({s, "", var + "." + s});
    }
    args.push_back({"error", "", "error"});
    return aligned(fmt::format("  if (![_{} encodeToCommandEncoder", m.names.property).size(), args);
  }

  void barrier(TemplateData& item, const std::vector<BarrierBuffer>& buffers, const ir::Kernel& m) const {
    item.set("has_barrier", !buffers.empty());
    if (buffers.empty()) return;
    std::vector<std::string> resources;
    // One clause per earlier dispatch, hazard and use, in the order the buffers come.
    struct Clause {
      size_t after;
      bool after_wrote;
      ir::Access access;
      std::vector<std::string> names;
    };
    std::vector<Clause> clauses;
    for (const auto& b : buffers) {
      resources.push_back(label_of(b.buffer));
      auto it = std::find_if(clauses.begin(), clauses.end(), [&](const Clause& c) {
        return c.after == b.after && c.after_wrote == b.after_wrote && c.access == b.access;
      });
      if (it == clauses.end()) it = clauses.insert(clauses.end(), Clause{b.after, b.after_wrote, b.access, {}});
      it->names.push_back(b.buffer);
    }
    std::vector<std::string> said;
    for (const auto& c : clauses) {
      const char* verb = c.access == ir::Access::read ? "reads" : c.access == ir::Access::write ? "writes" : "updates";
      said.push_back(fmt::format("{} {} {} after {} {} {}", m.name, verb, spoken_list(c.names), f_.dispatches[c.after].kernel,
                                 c.after_wrote ? "wrote" : "read", c.names.size() == 1 ? "it" : "them"));
    }
    item.set("barrier_comment", fmt::format("{}.", fmt::join(said, "; ")));
    item.set("barrier_resources", fmt::format("{}", fmt::join(resources, ", ")));
    item.set("barrier_count", std::to_string(resources.size()));
  }

  void facade(TemplateData& d) const {
    std::vector<SelectorPart> args;
    for (size_t i = 0; i < k_.buffers.size(); ++i) {
      const ir::BufferNames& n = k_.names.buffers[i];
      args.push_back({n.label, "", fmt::format("(__bridge id<MTLBuffer>)buffers.{}.buffer", k_.buffers[i].name)});
      args.push_back({n.offset, "", fmt::format("buffers.{}.offset", k_.buffers[i].name)});
    }
    for (const char* s : {"dims", "scalars", "types"}) {
      if (!k_.scalars.empty() || std::string(s) != "scalars") args.push_back({s, "", s});
    }
    args.push_back({"error", "", "&failure"});
    d.set("facade_args", aligned(std::string("  const BOOL encoded = [impl_->glue encodeToCommandEncoder").size(), args));
    // initWith<First>:(MTG<First>*)first then the other kernels, colons aligned under the first.
    const ir::Kernel& first = f_.kernels.front();
    const std::string first_label = "initWith" + first.names.camel;
    d.set("init_first", fmt::format("{}:({}*){}", first_label, objc_class_name(first), first.names.property));
    std::vector<SelectorPart> rest, forward;
    for (size_t i = 1; i < f_.kernels.size(); ++i) {
      const std::string& name = f_.kernels[i].names.property;
      rest.push_back({name, objc_class_name(f_.kernels[i]) + "*", name});
      forward.push_back({name, "", name});
    }
    d.set("init_rest", aligned(std::string("- (instancetype)").size() + first_label.size(), rest));
    d.set("init_label", first_label);
    d.set("first_property", first.names.property);
    d.set("init_forward", aligned(std::string("  return [self ").size() + first_label.size(), forward));
  }

  // The glue's parameter for the family's buffer `name`.
  const std::string& label_of(const std::string& name) const {
    for (size_t i = 0; i < k_.buffers.size(); ++i) {
      if (k_.buffers[i].name == name) return k_.names.buffers[i].label;
    }
    throw std::logic_error("family " + k_.name + " has no buffer " + name);
  }

  const ir::Kernel& k_;
  const ir::Family& f_;
  const std::string camel_;
  const std::string class_name_;
  const std::string facade_class_;
  const std::vector<std::string> stems_;
};

}  // namespace

std::vector<std::vector<BarrierBuffer>> family_barriers(const ir::Family& family) {
  // Per family buffer, the accesses not yet ordered by a barrier naming it.
  struct Pending {
    std::optional<size_t> writer;
    std::vector<size_t> readers;
  };
  std::map<std::string, Pending> pending;
  std::vector<std::vector<BarrierBuffer>> out(family.dispatches.size());
  for (size_t i = 0; i < family.dispatches.size(); ++i) {
    const ir::FamilyDispatch& d = family.dispatches[i];
    const ir::Kernel& m = family.kernel_of(d);
    // In the member's buffer order; a family buffer bound twice is accessed both ways.
    std::vector<std::pair<std::string, ir::Access>> access;
    for (const auto& mb : m.buffers) {
      const std::string& name = ir::Family::bound(d.buffers, mb.name);
      auto it = std::find_if(access.begin(), access.end(), [&](const auto& a) { return a.first == name; });
      if (it == access.end()) {
        access.emplace_back(name, mb.access);
      } else if (it->second != mb.access) {
        it->second = ir::Access::read_write;
      }
    }
    for (const auto& [name, a] : access) {
      Pending& p = pending[name];
      if (p.writer) {
        out[i].push_back({name, *p.writer, true, a});
      } else if (writes(a) && !p.readers.empty()) {
        out[i].push_back({name, p.readers.front(), false, a});
      }
    }
    for (const auto& b : out[i]) pending.erase(b.buffer);
    for (const auto& [name, a] : access) {
      Pending& p = pending[name];
      if (writes(a)) p.writer = i;
      if (reads(a)) p.readers.push_back(i);
    }
  }
  return out;
}

support::TemplateData family_library_item(const ir::Kernel& family) {
  TemplateData item;
  const std::string& cls = family.names.objc_class;
  const std::string& property = family.names.property;
  item.set("kernel", family.name);
  item.set("class_name", cls);
  item.set("property", property);
  const auto& kernels = family.family->kernels;
  const std::string first_label = "initWith" + kernels.front().names.camel;
  item.set("init_first", fmt::format("{}:_{}", first_label, kernels.front().names.property));
  std::vector<SelectorPart> rest;
  for (size_t i = 1; i < kernels.size(); ++i) rest.push_back({kernels[i].names.property, "", "_" + kernels[i].names.property});
  item.set("init_rest", aligned(fmt::format("  _{} = [[{} alloc] {}", property, cls, first_label).size(), rest));
  return item;
}

void emit_family_objc(const ir::Kernel& family, support::OutputSet& out) { FamilyWriter(family).run(out); }

}  // namespace mtlgen::emit
