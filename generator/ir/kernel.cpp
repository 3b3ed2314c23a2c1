#include "ir/kernel.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace mtlgen::ir {

const char* to_string(Access a) {
  switch (a) {
    case Access::read: return "read";
    case Access::write: return "write";
    case Access::read_write: return "read_write";
  }
  return "?";
}

const char* to_string(Distribution d) {
  switch (d) {
    case Distribution::normal: return "normal";
    case Distribution::uniform: return "uniform";
    case Distribution::constant: return "constant";
    case Distribution::choice: return "choice";
    case Distribution::iota: return "iota";
    case Distribution::bits: return "bits";
  }
  return "?";
}

const std::vector<HelperInfo>& all_helpers() {
  static const std::vector<HelperInfo> table = {
      {Helper::tg_sum, "tg_sum", "tg_sum.metal", {}, {}},
      {Helper::tg_max, "tg_max", "tg_max.metal", {}, {}},
      {Helper::tg_min, "tg_min", "tg_min.metal", {}, {}},
      {Helper::argmax_combine, "argmax_combine", "argmax_combine.metal", {}, {"value_index"}},
      {Helper::tg_argmax, "tg_argmax", "tg_argmax.metal", {Helper::argmax_combine}, {}},
  };
  return table;
}

const HelperInfo& info(Helper h) { return all_helpers()[static_cast<size_t>(h)]; }

const Variant& Kernel::default_variant_for(const std::map<std::string, ScalarType>& types) const {
  for (const auto& v : variants) {
    if (v.is_default_tuning && v.types == types) return v;
  }
  throw std::logic_error("no default variant for a type combination of " + name);
}

int64_t Buffer::elements(const expr::Env& env) const {
  int64_t count = 1;
  for (const auto& e : shape) count *= std::max<int64_t>(expr::evaluate(e, env), 0);
  return count;
}

const Variant& Kernel::serving_variant(const std::map<std::string, int64_t>& dims,
                                       const std::map<std::string, ScalarType>& types) const {
  const Variant& preferred = default_variant_for(types);
  auto accepts = [&](const Variant& v) {
    try {
      return variant_violation(dims, v).empty();
    } catch (const expr::EvalError&) {
      return false;
    }
  };
  if (!has_per_variant_preconditions() || accepts(preferred)) return preferred;
  const Variant* best = &preferred;
  int best_shared = -1;
  for (const auto& v : variants) {
    if (v.types != types || !accepts(v)) continue;
    int shared = 0;
    for (const auto& [name, value] : v.tunables) shared += preferred.tunables.at(name) == value;
    if (shared > best_shared) best = &v, best_shared = shared;
  }
  return *best;
}

bool Kernel::selects(VariantSelection selection, const Variant& variant) const {
  switch (selection) {
    case VariantSelection::all: return true;
    case VariantSelection::each: return variant.is_default_tuning || variant.types == variants.front().types;
    case VariantSelection::defaults: return variant.is_default_tuning;
  }
  return false;
}

const Variant& Kernel::variant_to_run(VariantSelection selection, const Variant& variant,
                                      const std::map<std::string, int64_t>& dims) const {
  return selection == VariantSelection::defaults ? serving_variant(dims, variant.types) : variant;
}

bool Kernel::has_per_variant_preconditions() const {
  return std::any_of(preconditions.begin(), preconditions.end(), [](const Precondition& p) { return p.per_variant; });
}

expr::Env Kernel::env_for(const std::map<std::string, int64_t>& dims, const Variant& variant) {
  expr::Env env;
  add_concrete_type_sizes(env.type_sizes);
  env.symbols.insert(dims.begin(), dims.end());
  env.symbols.insert(variant.tunables.begin(), variant.tunables.end());
  for (const auto& [param, type] : variant.types) env.type_sizes[param] = info(type).size;
  return env;
}

std::string Kernel::variant_violation(const std::map<std::string, int64_t>& dims, const Variant& variant) const {
  const expr::Env env = env_for(dims, variant);
  for (const auto& p : preconditions) {
    if (p.per_variant && !expr::evaluate(p.check, env)) return p.message;
  }
  return "";
}

std::vector<int64_t> Kernel::threadgroup_shape(const Variant& variant, const expr::Env& env) const {
  if (!dispatch.threads_from_dims) return variant.threadgroup_shape;
  std::vector<int64_t> shape;
  for (const auto& e : dispatch.threads_per_threadgroup) shape.push_back(expr::evaluate(e, env));
  return shape;
}

std::string Kernel::dims_violation(const std::map<std::string, int64_t>& dims) const {
  expr::Env env;
  add_concrete_type_sizes(env.type_sizes);
  for (const auto& d : this->dims) {
    int64_t v = dims.at(d.name);
    if (v < d.min || (d.max && v > *d.max) || v % d.multiple_of != 0 || v > UINT32_MAX) {
      return fmt::format("{} = {} is outside its bounds (min {}, max {}, multiple of {})", d.name, v, d.min,
                         d.max ? std::to_string(*d.max) : "none", d.multiple_of);
    }
    env.symbols[d.name] = v;
  }
  for (const auto& p : preconditions) {
    if (!p.per_variant && !expr::evaluate(p.check, env)) return "violates precondition: " + p.message;
  }
  return "";
}

std::map<std::string, int64_t> Family::member_dims(const FamilyDispatch& d, const std::map<std::string, int64_t>& dims,
                                                   const Variant& family_variant) const {
  const expr::Env env = Kernel::env_for(dims, family_variant);
  std::map<std::string, int64_t> out;
  for (const auto& b : d.dims) out[b.member] = expr::evaluate(b.value, env);
  return out;
}

std::map<std::string, ScalarType> Family::member_types(const FamilyDispatch& d, const Variant& family_variant) const {
  std::map<std::string, ScalarType> out;
  for (const auto& b : d.types) {
    auto it = family_variant.types.find(b.family);
    out[b.member] = it != family_variant.types.end() ? it->second : *scalar_type_from_spec(b.family);
  }
  return out;
}

const Variant& Family::member_variant(const FamilyDispatch& d, const std::map<std::string, int64_t>& member_dims,
                                      const Variant& family_variant) const {
  return kernel_of(d).serving_variant(member_dims, member_types(d, family_variant));
}

const std::string& Family::bound(const std::vector<FamilyBinding>& list, const std::string& member) {
  for (const auto& b : list) {
    if (b.member == member) return b.family;
  }
  throw std::logic_error("an unbound member name: " + member);
}

// Type parameters appear in the description only when a per-variant precondition measures them.
std::string Kernel::describe_tuning(const Variant& variant) const {
  std::set<std::string> used;
  for (const auto& p : preconditions) {
    if (p.per_variant) p.check.collect_symbols(used);
  }
  std::vector<std::string> parts;
  for (const auto& t : type_params) {
    if (used.count(t.name)) parts.push_back(fmt::format("{}={}", t.name, info(variant.types.at(t.name)).spec_name));
  }
  for (const auto& t : tunables) parts.push_back(fmt::format("{}={}", t.name, variant.tunables.at(t.name)));
  return fmt::format("{}", fmt::join(parts, ", "));
}

ConstantSetting Kernel::default_constants() const {
  ConstantSetting setting;
  for (const auto& f : function_constants) setting.push_back(f.default_value);
  return setting;
}

std::vector<ConstantSetting> Kernel::constant_settings(const TestCase& test) const {
  std::vector<ConstantSetting> settings = {{}};
  for (const auto& f : function_constants) {
    std::vector<double> values = {f.default_value};
    if (auto it = test.constants.find(f.name); it != test.constants.end()) {
      values = it->second.values;
    } else if (auto plan = tests.constants.find(f.name); plan != tests.constants.end()) {
      values = plan->second.values;
    }
    std::vector<ConstantSetting> next;
    for (const auto& partial : settings) {
      for (double v : values) {
        next.push_back(partial);
        next.back().push_back(v);
      }
    }
    settings = std::move(next);
  }
  return settings;
}

std::string Kernel::describe(const ConstantSetting& setting) const {
  std::string text;
  for (size_t i = 0; i < function_constants.size() && i < setting.size(); ++i) {
    const auto& f = function_constants[i];
    std::string value =
        f.type == ScalarType::boolean ? (setting[i] != 0 ? "true" : "false") : fmt::format("{}", setting[i]);
    text += fmt::format("{}{}={}", text.empty() ? "" : ", ", f.name, value);
  }
  return text;
}

const BlockLayout* Kernel::block_of(const Buffer& b) const {
  for (const auto& layout : blocks) if (layout.name == b.block) return &layout;
  return nullptr;
}

InputFill Kernel::input_fill(const TestCase& test, const std::string& buffer) const {
  auto own = test.inputs.find(buffer);
  InputFill fill = own != test.inputs.end() ? own->second : tests.default_fill;
  const Buffer* b = nullptr;
  for (const auto& x : buffers) if (x.name == buffer) b = &x;
  if (!b) return fill;
  if (const BlockLayout* layout = block_of(*b)) {  // every field: its own fill, else the plan's default
    InputFill out = own != test.inputs.end() ? fill : InputFill{};
    out.dist = Distribution::bits;
    out.fields.clear();
    for (const auto& f : layout->fields) {
      FieldFill field{f.name, tests.default_fill, f.loc};
      for (const auto& given : fill.fields) if (given.field == f.name) field = given;  // the default has none
      out.fields.push_back(field);
    }
    return out;
  }
  if (own == test.inputs.end() && b->type.concrete == ScalarType::bytes) {
    InputFill bits;  // the plan's numbers would say nothing about a packed format
    bits.dist = Distribution::bits;
    return bits;
  }
  return fill;
}

const Tolerance* Kernel::output_tolerance(const std::string& buffer) const {
  auto it = tests.output_tolerances.find(buffer);
  return it == tests.output_tolerances.end() ? nullptr : &it->second;
}

}  // namespace mtlgen::ir
