#include "spec/tests_parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "spec/names.h"
#include "spec/spec_node_reader.h"
#include "support/text.h"

namespace mtlgen::spec {

using support::ErrorKind;
using support::SourceLoc;

namespace {

class TestsParser : SpecNodeReader {
 public:
  TestsParser(const YamlContext& ctx, ir::Kernel& k) : SpecNodeReader(ctx, k) {}

  void run(const YAML::Node& n);

 private:
  void tolerance(const YAML::Node& key, const YAML::Node& value);
  std::optional<double> non_negative(const YAML::Node& n, const char* what);
  void fraction(const YAML::Node& n, const char* what, double& out);
  void check_case_name(const std::string& name, const SourceLoc& loc);
  std::optional<ir::InputFill> input_fill(const YAML::Node& n);
  std::optional<ir::InputFill> buffer_fill(const YAML::Node& n, const std::string& buffer);
  void test_case(const YAML::Node& n);
  void constant_values(const YAML::Node& map, std::map<std::string, ir::ConstantValues>& out);
  void reject_other_distribution_keys(const YAML::Node& n, const std::string& dist);
  const ir::Buffer* buffer_named(const std::string& name) const {
    for (const auto& b : k_.buffers) if (b.name == name) return &b;
    return nullptr;
  }
  void case_input(const YAML::Node& key, const YAML::Node& value);
  const ir::BlockLayout* block_named(const std::string& name) const {
    for (const auto& b : k_.blocks) if (b.name == name) return &b;
    return nullptr;
  }

  // `tests.case_inputs`: a buffer's fill in every case that does not fill it itself.
  std::map<std::string, ir::InputFill> case_inputs_;
};

void TestsParser::run(const YAML::Node& n) {
  MapReader r(ctx_, n, "tests", {"seed", "tolerance", "inputs", "case_inputs", "constants", "cases"});
  if (!r.ok()) return;
  if (auto s = r.optional("seed"); s.IsDefined()) k_.tests.seed = static_cast<uint64_t>(ctx_.integer(s, "seed").value_or(1));
  each_unique_entry(r.optional("tolerance"), "tolerance", [&](auto& key, auto& v) { tolerance(key, v); });
  if (auto i = r.optional("inputs"); i.IsDefined()) {
    if (auto f = input_fill(i)) k_.tests.default_fill = *f;
  }
  each_unique_entry(r.optional("case_inputs"), "case_inputs", [&](auto& key, auto& v) { case_input(key, v); });
  constant_values(r.optional("constants"), k_.tests.constants);
  each_item(r.required("cases"), "cases", [&](const YAML::Node& c) { test_case(c); });
}

void TestsParser::case_input(const YAML::Node& key, const YAML::Node& value) {
  SourceLoc loc;
  std::string name = key_name(key, loc);
  // what a case fills: the caller's read or read_write buffers (as the validator checks a case's `inputs`)
  const ir::Buffer* b = buffer_named(name);
  if (!b || !b->is_host_input()) {
    std::vector<std::string> inputs;
    for (const auto& x : k_.buffers) if (x.is_host_input()) inputs.push_back(x.name);
    std::string s = support::did_you_mean(name, inputs);
    ctx_.diags().error(ErrorKind::test_case, loc, fmt::format("`{}` is not an input buffer", name),
                       s.empty() ? fmt::format("the input buffers are: {}", fmt::join(inputs, ", "))
                                 : fmt::format("did you mean `{}`?", s));
    return;
  }
  if (auto f = buffer_fill(value, name)) case_inputs_[name] = *f;
}

void TestsParser::tolerance(const YAML::Node& key, const YAML::Node& value) {
  SourceLoc loc;
  std::string type_name = key_name(key, loc);
  auto type = ir::scalar_type_from_spec(type_name);
  const ir::Buffer* output = buffer_named(type_name);
  if (!type && !output) {
    std::vector<std::string> outputs;
    for (const auto& b : k_.buffers) if (b.is_output()) outputs.push_back(b.name);
    std::string s = support::did_you_mean(type_name, outputs);
    ctx_.diags().error(ErrorKind::bad_value, loc, fmt::format("`{}` is neither an element type nor an output", type_name),
                       !s.empty() ? fmt::format("did you mean `{}`?", s)
                                  : fmt::format("tolerances are keyed by an element type (float, half, ...) or an "
                                                "output buffer ({})", fmt::join(outputs, ", ")));
    return;
  }
  if (output && !output->is_output()) {
    ctx_.diags().error(ErrorKind::bad_value, loc, fmt::format("buffer `{}` is read-only: it is never compared", type_name),
                       "give tolerances to outputs (access: write or read_write)");
    return;
  }
  MapReader r(ctx_, value, fmt::format("tolerance for {}", type_name), {"max_abs", "max_rel", "nmse", "exact", "peak_rel"});
  if (!r.ok()) return;
  ir::Tolerance t;
  if (auto v = r.optional("max_abs"); v.IsDefined()) t.max_abs = non_negative(v, "max_abs");
  if (auto v = r.optional("max_rel"); v.IsDefined()) t.max_rel = non_negative(v, "max_rel");
  if (auto v = r.optional("nmse"); v.IsDefined()) t.nmse = non_negative(v, "nmse");
  if (auto v = r.optional("peak_rel"); v.IsDefined()) t.peak_rel = non_negative(v, "peak_rel");
  if (auto v = r.optional("exact"); v.IsDefined()) t.exact = ctx_.boolean(v, "exact").value_or(false);
  if (output) k_.tests.output_tolerances[type_name] = t;
  else k_.tests.tolerances[*type] = t;
}

// A finite number >= 0 (a tolerance, a standard deviation); NaN would make every comparison pass.
std::optional<double> TestsParser::non_negative(const YAML::Node& n, const char* what) {
  auto v = ctx_.number(n, what);
  if (v && !(std::isfinite(*v) && *v >= 0)) {
    ctx_.diags().error(ErrorKind::bad_value, ctx_.loc(n), fmt::format("{} must be a finite number >= 0, not {}", what, *v),
                       "write 0 or a positive number; nan and inf are not allowed here");
    return std::nullopt;
  }
  return v;
}

// A share of elements: a number in [0, 1].
void TestsParser::fraction(const YAML::Node& n, const char* what, double& out) {
  auto v = ctx_.number(n, what);
  if (!v) return;
  if (!(*v >= 0 && *v <= 1)) {
    ctx_.diags().error(ErrorKind::bad_value, ctx_.loc(n), fmt::format("`{}` must be a fraction from 0 to 1, not {}", what, *v),
                       "e.g. `nan: 0.01` replaces 1% of the elements");
    return;
  }
  out = *v;
}

std::optional<ir::InputFill> TestsParser::input_fill(const YAML::Node& n) {
  MapReader r(ctx_, n, "an input distribution",
              {"dist", "mean", "std", "min", "max", "value", "values", "start", "step", "nan", "inf", "-inf", "set"});
  if (!r.ok()) return std::nullopt;
  ir::InputFill f;
  f.loc = ctx_.loc(n);
  auto dist = r.required("dist");
  if (!dist.IsDefined()) return std::nullopt;
  std::string d = ctx_.string(dist, "dist").value_or("");
  static const std::vector<std::string> names = {"normal", "uniform", "constant", "choice", "iota", "bits"};
  auto pos = std::find(names.begin(), names.end(), d);
  if (pos == names.end()) {
    std::string s = support::did_you_mean(d, names);
    ctx_.diags().error(ErrorKind::bad_value, ctx_.loc(dist), fmt::format("unknown distribution `{}`", d),
                       s.empty() ? "dist is normal, uniform, constant, choice, iota or bits" : fmt::format("did you mean `{}`?", s));
    return std::nullopt;
  }
  f.dist = static_cast<ir::Distribution>(pos - names.begin());
  f.explicit_dist = true;
  auto num = [&](const char* key, double& out) {
    if (auto v = r.optional(key); v.IsDefined()) out = ctx_.number(v, key).value_or(out);
  };
  bool normal = f.dist == ir::Distribution::normal;
  if (normal) {
    f.a = 0;
    f.b = 1;
    num("mean", f.a);
    if (auto v = r.optional("std"); v.IsDefined()) f.b = non_negative(v, "std").value_or(f.b);
  }
  if (f.dist == ir::Distribution::uniform) {
    f.a = -1;
    f.b = 1;
    num("min", f.a);
    num("max", f.b);
    if (!(f.a <= f.b)) {
      auto min = r.optional("min");
      ctx_.diags().error(ErrorKind::bad_value, ctx_.loc(min.IsDefined() ? min : n),
                         fmt::format("uniform min {} is above max {}", f.a, f.b),
                         "give min <= max, both finite");
    }
  }
  if (f.dist == ir::Distribution::constant) { num("value", f.a); }
  if (f.dist == ir::Distribution::iota) { f.a = 0; f.b = 1; num("start", f.a); num("step", f.b); }
  if (f.dist == ir::Distribution::choice) {
    auto values = r.required("values");
    each_item(values, "values", [&](const YAML::Node& v) {
      if (auto x = ctx_.number(v, "a value")) f.values.push_back(*x);
    });
    if (values.IsSequence() && values.size() == 0) {
      ctx_.diags().error(ErrorKind::bad_value, ctx_.loc(values), "`choice` lists no values",
                         "e.g. `values: [0, 1, -1]`");
    }
  }
  each_unique_entry(r.optional("set"), "set", [&](auto& key, auto& v) {
    auto index = ctx_.integer(key, "an element index");
    auto value = ctx_.number(v, "a value");
    if (index && value) f.set[*index] = *value;
  });
  reject_other_distribution_keys(r.node(), d);
  for (auto [key, out] : {std::pair{"nan", &f.nan_fraction}, std::pair{"inf", &f.inf_fraction},
                          std::pair{"-inf", &f.neg_inf_fraction}}) {
    if (auto v = r.optional(key); v.IsDefined()) fraction(v, key, *out);
  }
  return f;
}

// A buffer of blocks is filled field by field: `{d: {dist: normal, std: 0.02}, qs: {...}}`.
std::optional<ir::InputFill> TestsParser::buffer_fill(const YAML::Node& n, const std::string& buffer) {
  const ir::Buffer* b = buffer_named(buffer);
  const ir::BlockLayout* layout = b && !b->block.empty() ? block_named(b->block) : nullptr;
  if (!layout) return input_fill(n);
  if (!ctx_.expect_map(n, fmt::format("the fill of `{}` (a field of block `{}` each)", buffer, layout->name).c_str())) {
    return std::nullopt;
  }
  ir::InputFill f;
  f.loc = ctx_.loc(n);
  f.dist = ir::Distribution::bits;
  each_unique_entry(n, "fields", [&](auto& key, auto& v) {
    ir::FieldFill field;
    field.field = key_name(key, field.loc);
    if (!layout->field(field.field)) {
      std::vector<std::string> names;
      for (const auto& x : layout->fields) names.push_back(x.name);
      std::string s = support::did_you_mean(field.field, names);
      ctx_.diags().error(ErrorKind::unknown_key, field.loc,
                         fmt::format("block `{}` has no field `{}`", layout->name, field.field),
                         s.empty() ? fmt::format("a fill per field: {}", fmt::join(names, ", "))
                                   : fmt::format("did you mean `{}`?", s));
      return;
    }
    if (auto x = input_fill(v)) {
      field.fill = *x;
      f.fields.push_back(std::move(field));
    }
  });
  return f;
}

// `min: 0` on a normal distribution would be silently ignored: say so instead.
void TestsParser::reject_other_distribution_keys(const YAML::Node& n, const std::string& dist) {
  static const std::map<std::string, std::vector<std::string>> own = {
      {"normal", {"mean", "std"}},   {"uniform", {"min", "max"}}, {"constant", {"value"}},
      {"choice", {"values"}},        {"iota", {"start", "step"}}, {"bits", {}}};
  static const std::set<std::string> common = {"dist", "nan", "inf", "-inf", "set"};
  const auto& keys = own.at(dist);
  for (auto it = n.begin(); it != n.end(); ++it) {
    std::string key = it->first.Scalar();
    if (common.count(key) || std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
    ctx_.diags().error(ErrorKind::unknown_key, ctx_.loc(it->first),
                       fmt::format("`{}` does not apply to a {} distribution", key, dist),
                       keys.empty() ? fmt::format("{} takes no parameters", dist)
                                    : fmt::format("{} takes: {}", dist, fmt::join(keys, ", ")));
  }
}

void TestsParser::test_case(const YAML::Node& n) {
  MapReader r(ctx_, n, "a test case", {"name", "dims", "inputs", "scalars", "constants", "seed", "benchmark"});
  if (!r.ok()) return;
  ir::TestCase c;
  c.loc = ctx_.loc(n);
  if (auto v = r.required("name"); v.IsDefined()) {
    c.name = ctx_.string(v, "name").value_or("");
    check_case_name(c.name, ctx_.value_loc(v));
  }
  each_unique_entry(r.required("dims"), "dims", [&](auto& key, auto& v) {
    SourceLoc loc;
    std::string name = key_name(key, loc);
    if (auto i = ctx_.integer(v, "a dim value")) c.dims[name] = *i;
  });
  each_unique_entry(r.optional("inputs"), "inputs", [&](auto& key, auto& v) {
    SourceLoc loc;
    std::string name = key_name(key, loc);
    if (auto f = buffer_fill(v, name)) c.inputs[name] = *f;
  });
  for (const auto& [name, fill] : case_inputs_) c.inputs.try_emplace(name, fill);
  each_unique_entry(r.optional("scalars"), "scalars", [&](auto& key, auto& v) {
    SourceLoc loc;
    std::string name = key_name(key, loc);
    if (auto x = ctx_.number(v, "a scalar value")) c.scalars[name] = *x;
  });
  constant_values(r.optional("constants"), c.constants);
  if (auto v = r.optional("seed"); v.IsDefined()) {
    if (auto s = ctx_.integer(v, "seed")) c.seed = static_cast<uint64_t>(*s);
  }
  if (auto v = r.optional("benchmark"); v.IsDefined()) c.benchmark = ctx_.boolean(v, "benchmark").value_or(false);
  k_.tests.cases.push_back(std::move(c));
}

// Located at the name itself (the validator only knows the case's `{`); `--case NAME` and the
// generated harness use it as an identifier.
void TestsParser::check_case_name(const std::string& name, const SourceLoc& loc) {
  if (!support::is_identifier(name)) {
    ctx_.diags().error(ErrorKind::invalid_identifier, loc, fmt::format("`{}` is not a valid test case name", name),
                       "names start with a letter or `_` and contain only letters, digits and `_`");
  } else if (const char* by = reserved_by(name)) {
    ctx_.diags().error(ErrorKind::reserved_identifier, loc, fmt::format("`{}` is reserved by {}", name, by),
                       fmt::format("rename the test case, e.g. `{}_`", name));
  }
}

// `{use_bias: false, mode: [0, 3]}`: a value or a list of values per function constant. Names that
// are no function constant keep no values; the validator reports them with a did-you-mean.
// `true`/`false` values make a bool constant; anything else is read as a number.
ir::ScalarType source_constant_type(const YAML::Node& v) {
  const YAML::Node& first = v.IsSequence() && v.size() > 0 ? v[0] : v;
  bool is_bool = first.IsScalar() && (first.Scalar() == "true" || first.Scalar() == "false");
  return is_bool ? ir::ScalarType::boolean : ir::ScalarType::f32;
}

void TestsParser::constant_values(const YAML::Node& map, std::map<std::string, ir::ConstantValues>& out) {
  each_entry(map, "constants", [&](auto& key, auto& v) {
    ir::ConstantValues cv;
    std::string name = key_name(key, cv.loc);
    auto found = std::find_if(k_.function_constants.begin(), k_.function_constants.end(),
                              [&](const ir::FunctionConstant& f) { return f.name == name; });
    const ir::FunctionConstant* decl = found == k_.function_constants.end() ? nullptr : &*found;
    // A hand-written kernel's constants are declared in its source, read after parsing.
    ir::FunctionConstant from_source;
    from_source.name = name;
    from_source.type = source_constant_type(v);
    if (!decl && k_.source) decl = &from_source;
    if (decl) {
      std::string what = fmt::format("the value of function constant `{}`", name);
      auto add = [&](const YAML::Node& item) {
        if (auto x = constant_value(*decl, item, what.c_str())) {
          cv.values.push_back(*x);
          cv.value_locs.push_back(ctx_.loc(item));
        }
      };
      if (v.IsSequence()) {
        for (const auto& item : v) add(item);
      } else {
        add(v);
      }
    }
    out[name] = std::move(cv);
  });
}

}  // namespace

void parse_tests(const YamlContext& ctx, const YAML::Node& tests, ir::Kernel& kernel) { TestsParser(ctx, kernel).run(tests); }

}  // namespace mtlgen::spec
