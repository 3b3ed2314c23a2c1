#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "emit_common/cpp_text.h"
#include "emit_common/emitter.h"
#include "emit_reference/reference_emitter.h"

namespace mtlgen::emit {

namespace {

using support::TemplateData;

TemplateData lines(const std::vector<std::string>& items) { return support::string_list(items); }

class TypesWriter {
 public:
  explicit TypesWriter(const ir::Kernel& k) : k_(k) {}

  std::string run() const {
    TemplateData d;
    d.set("banner", banner(k_, k_.name + "_types.h"));
    d.set("kernel", k_.name);
    d.set("summary", comment_text(k_.summary));
    d.set("msl_version", k_.msl_version);
    declarations(d);
    params(d);
    checks(d);
    d.set("buffers", buffers());
    d.set("has_dispatch", !k_.is_family());
    d.set("family", k_.is_family());
    dispatch(d);
    d.set("variants", variants());
    d.set("variant_count", std::to_string(k_.variants.size()));
    variant_lookup(d);
    d.set("picks_tuning", k_.has_per_variant_preconditions());
    std::vector<std::string> tunable_names;
    for (const auto& t : k_.tunables) tunable_names.push_back(t.name);
    d.set("tunable_names", fmt::format("{}", fmt::join(tunable_names, ", ")));
    cost(d);
    return support::render_template("reference/kernel_types.h.mustache", d);
  }

 private:
  void declarations(TemplateData& d) const {
    TemplateData dims{TemplateData::type::list}, scalars{TemplateData::type::list};
    TemplateData tunables{TemplateData::type::list}, types{TemplateData::type::list};
    for (const auto& x : k_.dims) dims.push_back(item({{"name", x.name}, {"doc", comment_text(x.doc)}}));
    for (const auto& s : k_.scalars) {
      scalars.push_back(item({{"type", ir::info(s.type).cpp}, {"name", s.name},
                              {"default", cpp_literal(s.type, s.default_value)}, {"doc", comment_text(s.doc)}}));
    }
    function_constants(d);
    for (const auto& t : k_.tunables) {
      tunables.push_back(item({{"name", t.name}, {"default", std::to_string(t.default_value)},
                               {"values", fmt::format("{}", fmt::join(t.values, ", "))}, {"doc", comment_text(t.doc)}}));
    }
    for (const auto& t : k_.type_params) {
      std::vector<std::string> names;
      for (auto type : t.types) names.push_back(ir::info(type).spec_name);
      types.push_back(item({{"name", t.name}, {"default", ir::info(t.types.front()).suffix},
                            {"values", fmt::format("{}", fmt::join(names, ", "))}}));
    }
    d.set("dims", dims);
    d.set("scalars", scalars);
    d.set("has_scalars", !k_.scalars.empty());
    d.set("tunables", tunables);
    d.set("has_tunables", !k_.tunables.empty());
    d.set("type_params", types);
    d.set("has_type_params", !k_.type_params.empty());
  }

  void function_constants(TemplateData& d) const {
    TemplateData list{TemplateData::type::list};
    bool needs_numeric = false;
    for (const auto& f : k_.function_constants) {
      list.push_back(item({{"type", ir::info(f.type).cpp}, {"name", f.name},
                           {"default", cpp_initializer(f.type, f.default_value)}, {"doc", comment_text(f.doc)}}));
      needs_numeric = needs_numeric || f.type == ir::ScalarType::f16 || f.type == ir::ScalarType::bf16;
    }
    d.set("function_constants", list);
    d.set("has_function_constants", !k_.function_constants.empty());
    d.set("needs_numeric", needs_numeric);
  }

  static TemplateData item(std::initializer_list<std::pair<std::string, std::string>> fields) {
    TemplateData t;
    for (const auto& [k, v] : fields) {
      if (k == "doc" && v.empty()) continue;  // absent doc: the section renders nothing
      t.set(k, v);
    }
    return t;
  }

  void params(TemplateData& d) const {
    TemplateData fields{TemplateData::type::list};
    std::vector<std::string> init;
    for (const auto& f : k_.params_fields) {
      fields.push_back(item({{"type", ir::info(f.type).cpp}, {"name", f.name}}));
      init.push_back(fmt::format("{}.{}", f.is_dim ? "dims" : "scalars", f.name));
    }
    d.set("params_struct", k_.params_struct_name());
    d.set("params_index", std::to_string(k_.params_index));
    d.set("params_fields", fields);
    d.set("params_size", std::to_string(4 * k_.params_fields.size()));
    d.set("params_init", fmt::format("{}", fmt::join(init, ", ")));
    std::vector<std::string> parts;
    for (const auto& x : k_.dims) parts.push_back(fmt::format("\"{0} = \" + std::to_string(dims.{0})", x.name));
    d.set("describe", parts.empty() ? std::string("std::string()") : fmt::format("{}", fmt::join(parts, " + \", \" + ")));
  }

  void checks(TemplateData& d) const {
    TemplateData list{TemplateData::type::list};
    std::vector<const expr::Expr*> used;
    auto add = [&](std::string condition, std::string message) {
      std::string quoted = c_string(message);  // the template supplies the quotes
      list.push_back(item({{"condition", condition}, {"message", quoted.substr(1, quoted.size() - 2)}}));
    };
    std::vector<std::string> locals;
    for (const auto& x : k_.dims) {
      bool referenced = x.min > 0 || x.max || x.multiple_of > 1;
      if (referenced) locals.push_back(fmt::format("const int64_t {0} = dims.{0};", x.name));
      if (x.min > 0) add(fmt::format("{} >= {}", x.name, x.min), fmt::format("{} must be at least {}", x.name, x.min));
      if (x.max) add(fmt::format("{} <= {}", x.name, *x.max), fmt::format("{} must be at most {}", x.name, *x.max));
      if (x.multiple_of > 1) {
        add(fmt::format("{} % {} == 0", x.name, x.multiple_of), fmt::format("{} must be a multiple of {}", x.name, x.multiple_of));
      }
    }
    for (const auto& p : k_.preconditions) {
      if (p.per_variant) continue;
      std::set<std::string> syms;
      p.check.collect_symbols(syms);
      for (const auto& x : k_.dims) {
        std::string line = fmt::format("const int64_t {0} = dims.{0};", x.name);
        if (syms.count(x.name) && std::find(locals.begin(), locals.end(), line) == locals.end()) locals.push_back(line);
      }
      add(host_expr(p.check), p.message);
    }
    d.set("dim_locals", lines(locals));
    d.set("checks", list);
    variant_checks(d);
  }

  // Preconditions over tunables and sizeof(type parameter), for check_dims(dims, tuning, types).
  void variant_checks(TemplateData& d) const {
    TemplateData list{TemplateData::type::list};
    std::vector<const expr::Expr*> used;
    for (const auto& p : k_.preconditions) {
      if (!p.per_variant) continue;
      used.push_back(&p.check);
      std::string quoted = c_string(p.message);
      list.push_back(item({{"condition", host_expr(p.check)}, {"message", quoted.substr(1, quoted.size() - 2)}}));
    }
    d.set("variant_locals", lines(host_locals(k_, used)));
    d.set("variant_checks", list);
    d.set("describe_variant", describe_variant(used));
  }

  // `"TG=" + std::to_string(tuning.TG) + ...`, naming the variant as Kernel::describe_tuning does.
  std::string describe_variant(const std::vector<const expr::Expr*>& used) const {
    std::set<std::string> symbols;
    for (const auto* e : used) e->collect_symbols(symbols);
    std::vector<std::string> parts;
    for (const auto& t : k_.type_params) {
      if (symbols.count(t.name)) parts.push_back(fmt::format("\"{0}=\" + std::string(mtlgen::dtype_name(types.{0}))", t.name));
    }
    for (const auto& t : k_.tunables) parts.push_back(fmt::format("\"{0}=\" + std::to_string(tuning.{0})", t.name));
    return parts.empty() ? "std::string()" : fmt::format("{}", fmt::join(parts, " + \", \" + "));
  }

  TemplateData buffers() const {
    TemplateData list{TemplateData::type::list};
    for (const auto& b : k_.buffers) {
      std::vector<const expr::Expr*> exprs;
      for (const auto& e : b.shape) exprs.push_back(&e);
      // One tree, not joined texts: rendering parenthesises each axis by precedence.
      TemplateData t = item({{"name", b.name}, {"count", host_expr(expr::product(b.shape))}});
      t.set("locals", lines(host_locals(k_, exprs)));
      list.push_back(t);
    }
    return list;
  }

  static std::string axes(const std::vector<expr::Expr>& exprs, std::vector<const expr::Expr*>& used) {
    std::vector<std::string> parts;
    for (const auto& e : exprs) {
      used.push_back(&e);
      parts.push_back(fmt::format("static_cast<uint64_t>({})", host_expr(e)));
    }
    while (parts.size() < 3) parts.push_back("1");
    return fmt::format("{}", fmt::join(parts, ", "));
  }

  void dispatch(TemplateData& d) const {
    std::vector<const expr::Expr*> grid_used, threads_used, array_counts;
    d.set("grid", axes(k_.dispatch.threadgroups, grid_used));
    d.set("threads", axes(k_.dispatch.threads_per_threadgroup, threads_used));
    d.set("grid_locals", lines(host_locals(k_, grid_used)));
    d.set("threads_locals", lines(host_locals(k_, threads_used)));
    d.set("threads_from_dims", k_.dispatch.threads_from_dims);
    if (k_.dispatch.max_threads) {
      std::vector<const expr::Expr*> max_used = {&*k_.dispatch.max_threads};
      d.set("max_threads", fmt::format("static_cast<uint64_t>({})", host_expr(*k_.dispatch.max_threads)));
      d.set("max_threads_locals", lines(host_locals(k_, max_used)));
    }
    TemplateData arrays{TemplateData::type::list};
    for (const auto& a : k_.threadgroup_arrays) {
      array_counts.push_back(&a.count);
      std::string size = a.type.concrete ? std::to_string(ir::info(*a.type.concrete).size)
                                         : fmt::format("mtlgen::dtype_size(types.{})", a.type.param);
      arrays.push_back(item({{"index", std::to_string(a.index)}, {"name", a.name},
                             {"bytes", fmt::format("static_cast<uint64_t>(({}) * {})", host_expr(a.count), size)}}));
    }
    d.set("array_locals", lines(host_locals(k_, array_counts)));
    d.set("tg_arrays", arrays);
    d.set("tg_array_count", std::to_string(k_.threadgroup_arrays.size()));
    body_threadgroup_memory(d);
  }

  // body_threadgroup_memory_bytes(): the body's threadgroup variables, each rounded up to 16 as
  // the front end counts them against the 32 KiB (spec/variants.cpp). Only for a body that has some.
  void body_threadgroup_memory(TemplateData& d) const {
    d.set("has_body_tg", !k_.body_threadgroup_variables.empty());
    if (k_.body_threadgroup_variables.empty()) return;
    std::vector<const expr::Expr*> used;
    std::vector<std::string> terms;
    bool simd_size = false;
    for (const auto& b : k_.body_threadgroup_variables) {
      std::string size = b.type.concrete ? std::to_string(ir::info(*b.type.concrete).size * b.lanes)
                                         : fmt::format("mtlgen::dtype_size(types.{}) * {}", b.type.param, b.lanes);
      std::vector<std::string> factors = {size};
      for (const auto& e : b.extents) {
        std::set<std::string> names;
        e.collect_symbols(names);
        simd_size = simd_size || names.count("SIMD_SIZE");
        used.push_back(&e);
        factors.push_back(fmt::format("({})", host_expr(e)));
      }
      terms.push_back(fmt::format("(static_cast<uint64_t>({}) + 15) / 16 * 16", fmt::join(factors, " * ")));
    }
    std::vector<std::string> locals = host_locals(k_, used);
    if (simd_size) locals.insert(locals.begin(), "constexpr int64_t SIMD_SIZE = 32;  // the kernel's");
    d.set("body_tg_locals", lines(locals));
    d.set("body_tg_bytes", fmt::format("{}", fmt::join(terms, " +\n         ")));
  }

  // The variant table, the one list the .metal's instantiations are also written from.
  TemplateData variants() const {
    TemplateData list{TemplateData::type::list};
    for (const auto& v : k_.variants) {
      std::vector<std::string> tuning;
      for (const auto& t : k_.tunables) tuning.push_back(std::to_string(v.tunables.at(t.name)));  // field order
      list.push_back(item({{"entry_point", v.entry_point}, {"types", types_initializer(v.types)},
                           {"tuning", fmt::format("{}", fmt::join(tuning, ", "))}}));
    }
    return list;
  }

  // `mtlgen::DType::f32, mtlgen::DType::f16`: a Types aggregate's fields in declaration order.
  std::string types_initializer(const std::map<std::string, ir::ScalarType>& types) const {
    std::vector<std::string> fields;
    for (const auto& t : k_.type_params) fields.push_back(fmt::format("mtlgen::DType::{}", ir::info(types.at(t.name)).suffix));
    return fmt::format("{}", fmt::join(fields, ", "));
  }

  // The distinct type choices, how two type choices or tunings compare, and how a variant is named.
  void variant_lookup(TemplateData& d) const {
    std::vector<std::string> choices;
    for (const auto& v : k_.variants) {
      std::string choice = types_initializer(v.types);
      if (std::find(choices.begin(), choices.end(), choice) == choices.end()) choices.push_back(choice);
    }
    d.set("type_choices", lines(choices));
    d.set("type_choice_count", std::to_string(choices.size()));
    std::vector<std::string> same_types, same_tuning, describe, example;
    for (const auto& t : k_.type_params) {
      same_types.push_back(fmt::format("a.{0} == b.{0}", t.name));
      describe.push_back(fmt::format("\"{0} = \" + std::string(mtlgen::dtype_name(types.{0}))", t.name));
      example.push_back(fmt::format("{} = {}", t.name, ir::info(t.types.front()).msl));
    }
    for (const auto& t : k_.tunables) {
      same_tuning.push_back(fmt::format("a.{0} == b.{0}", t.name));
      describe.push_back(fmt::format("\"{0} = \" + std::to_string(tuning.{0})", t.name));
      example.push_back(fmt::format("{} = {}", t.name, t.default_value));
    }
    auto conjunction = [](const std::vector<std::string>& parts) {
      return parts.empty() ? std::string("true") : fmt::format("{}", fmt::join(parts, " && "));
    };
    d.set("same_types", conjunction(same_types));
    d.set("same_tuning", conjunction(same_tuning));
    d.set("describe_variant_full",
          describe.empty() ? std::string("\"the only variant\"") : fmt::format("{}", fmt::join(describe, " + \", \" + ")));
    d.set("describe_example", example.empty() ? std::string("\"the only variant\"")
                                              : fmt::format("\"{}\"", fmt::join(example, ", ")));
  }

  void cost(TemplateData& d) const {
    std::vector<std::string> parts;
    for (const auto* c : {&k_.cost.bytes_read, &k_.cost.bytes_written, &k_.cost.flops}) {
      parts.push_back(*c ? host_expr(**c) : "0");
    }
    TemplateData extra{TemplateData::type::list};
    for (const auto& q : k_.cost.extra) {
      parts.push_back(host_expr(q.value));
      extra.push_back(item({{"name", q.name}, {"doc", comment_text(q.doc)}, {"doc_literal", c_string(q.doc)},
                            {"formula", c_string(expr::to_source(q.value))}}));
    }
    d.set("has_cost_extra", !k_.cost.extra.empty());
    d.set("cost_locals", lines(host_locals(k_, k_.cost.formulas())));
    d.set("cost", fmt::format("{}", fmt::join(parts, ", ")));
    d.set("cost_extra", extra);
  }

  const ir::Kernel& k_;
};

}  // namespace

void emit_types(const ir::Kernel& kernel, support::OutputSet& out) {
  out.add(kernel.name + "/" + kernel.name + "_types.h", TypesWriter(kernel).run());
}

}  // namespace mtlgen::emit
