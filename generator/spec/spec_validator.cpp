#include "spec/spec_validator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "spec/name_assigner.h"
#include "spec/names.h"
#include "support/text.h"

namespace mtlgen::spec {

using support::Diagnostics;
using support::ErrorKind;
using support::SourceLoc;

namespace {


class Validator {
 public:
  Validator(ir::Kernel& k, Diagnostics& d, VariantBinder bind)
      : k_(k), diags_(d), errors_before_(d.error_count()), bind_variants_(std::move(bind)) {}

  void run() {
    if (k_.is_family()) validate_members();
    check_names();
    if (!has_errors()) assign_names(k_, diags_);  // after check_names: no cascade from a bad name
    check_type_refs();
    check_tunables();
    check_expressions();
    bool has_msl = !k_.is_source() && !k_.is_family();
    if (has_msl) assign_buffer_indices();  // a hand-written kernel's come from its source
    check_function_constants();
    check_blocks();
    if (has_msl) scan_body();
    if (has_errors()) return;  // variants evaluate expressions that must be sound
    build_variants();
    if (bind_variants_) bind_variants_(k_);
    if (has_errors()) return;
    build_bindings();
    if (k_.is_family()) check_family_dispatches();
    if (has_errors()) return;  // test cases evaluate the dispatches' dims
    check_tests();
  }

 private:
  // ---- names ----
  void check_identifier(const std::string& name, const SourceLoc& loc, const char* what) {
    if (!support::is_identifier(name)) {
      diags_.error(ErrorKind::invalid_identifier, loc, fmt::format("`{}` is not a valid {} name", name, what),
                   "names start with a letter or `_` and contain only letters, digits and `_`");
    } else if (const char* by = reserved_by(name)) {
      diags_.error(ErrorKind::reserved_identifier, loc, fmt::format("`{}` is reserved by {}", name, by),
                   fmt::format("rename the {}, e.g. `{}_`", what, name));
    }
  }

  void declare(const std::string& name, const SourceLoc& loc, const char* what) {
    check_identifier(name, loc, what);
    if (const char* by = reserved_in_kernel(name)) {
      diags_.error(ErrorKind::reserved_identifier, loc, fmt::format("`{}` is reserved by {}", name, by),
                   fmt::format("rename the {}, e.g. `{}_`", what, name));
    }
    auto [it, inserted] = declared_.emplace(name, loc);
    if (!inserted) {
      diags_.error(ErrorKind::duplicate_name, loc, fmt::format("`{}` is declared twice", name),
                   fmt::format("first declared at line {}; every name in a spec must be unique", it->second.line));
    }
  }

  void check_names() {
    check_identifier(k_.name, k_.name_loc, "kernel");
    // File names are built from it (`<name>_reference.cpp`, `MTG<Name>.mm`) and entry points
    // extend it: keep it well under the 255 bytes of a file name.
    if (k_.name.size() > kMaxKernelNameLength) {
      diags_.error(ErrorKind::bad_value, k_.name_loc,
                   fmt::format("kernel name is {} characters; at most {}", k_.name.size(), kMaxKernelNameLength),
                   "generated file names and entry points are built from it: shorten it");
    }
    for (const auto& t : k_.type_params) declare(t.name, t.loc, "type parameter");
    for (const auto& d : k_.dims) declare(d.name, d.loc, "dim");
    for (const auto& t : k_.tunables) declare(t.name, t.loc, "tunable");
    for (const auto& b : k_.buffers) declare(b.name, b.loc, "buffer");
    for (const auto& s : k_.scalars) declare(s.name, s.loc, "scalar");
    for (const auto& f : k_.function_constants) declare(f.name, f.loc, "function constant");
    for (const auto& a : k_.threadgroup_arrays) declare(a.name, a.loc, "threadgroup array");
  }

  // ---- types ----
  void check_type_ref(const ir::TypeRef& t) {
    if (t.concrete) return;
    bool known = std::any_of(k_.type_params.begin(), k_.type_params.end(),
                             [&](const ir::TypeParam& p) { return p.name == t.param; });
    if (known) return;
    std::vector<std::string> candidates = ir::spec_type_names();
    for (const auto& p : k_.type_params) candidates.push_back(p.name);
    std::string s = support::did_you_mean(t.param, candidates);
    diags_.error(ErrorKind::undefined_symbol, t.loc, fmt::format("unknown type `{}`", t.param),
                 s.empty() ? "use an element type or a parameter declared under `types:`"
                           : fmt::format("did you mean `{}`?", s));
  }

  void check_type_refs() {
    for (const auto& p : k_.type_params) {
      if (p.types.empty()) {
        diags_.error(ErrorKind::bad_value, p.loc, fmt::format("type parameter `{}` lists no types", p.name),
                     "e.g. `T: [float, half, bfloat]`");
      }
    }
    for (const auto& b : k_.buffers) check_type_ref(b.type);
    for (const auto& a : k_.threadgroup_arrays) check_type_ref(a.type);
    auto host_output = [](const ir::Buffer& b) { return b.is_output() && !b.intermediate; };
    if (std::none_of(k_.buffers.begin(), k_.buffers.end(), host_output)) {
      diags_.error(ErrorKind::missing_field, k_.name_loc, "the kernel has no output buffer",
                   "give at least one buffer `access: write` or `read_write`");
    }
  }

  void check_tunables() {
    for (const auto& t : k_.tunables) {
      if (t.values.empty()) {
        diags_.error(ErrorKind::bad_value, t.loc, fmt::format("tunable `{}` has no values", t.name),
                     "e.g. `values: [128, 256, 512]`");
        continue;
      }
      std::set<int64_t> seen(t.values.begin(), t.values.end());
      if (seen.size() != t.values.size() || *seen.begin() <= 0) {
        diags_.error(ErrorKind::bad_value, t.loc, fmt::format("tunable `{}` values must be positive and distinct", t.name),
                     "remove repeated or non-positive values");
      }
      if (!seen.count(t.default_value)) {
        diags_.error(ErrorKind::bad_value, t.default_loc,
                     fmt::format("default {} is not among the values of `{}`", t.default_value, t.name),
                     fmt::format("pick one of: {}", fmt::join(t.values, ", ")));
      }
    }
  }

  // ---- expressions ----
  enum Scope : unsigned { dims = 1, tunables = 2, types = 4 };

  void check_symbols(const expr::Expr& e, unsigned scope, const char* where) {
    if (e.kind == expr::Expr::Kind::symbol || e.kind == expr::Expr::Kind::size_of) {
      check_symbol(e, scope, where);
    }
    for (const auto& o : e.operands) check_symbols(o, scope, where);
  }

  void check_symbol(const expr::Expr& e, unsigned scope, const char* where) {
    auto has = [&](const auto& list) {
      return std::any_of(list.begin(), list.end(), [&](const auto& x) { return x.name == e.name; });
    };
    bool is_size_of = e.kind == expr::Expr::Kind::size_of;
    if (is_size_of ? ((scope & types) && has(k_.type_params)) || ir::scalar_type_from_spec(e.name)
                   : ((scope & dims) && has(k_.dims)) || ((scope & tunables) && has(k_.tunables))) {
      return;
    }
    std::string allowed = scope == tunables          ? "tunables"
                          : scope == tunables + types ? "tunables and sizeof()"
                          : scope & tunables ? "dims, tunables and sizeof()" : "dims and sizeof(<element type>)";
    std::string may_use = fmt::format("{} may use {}", where, allowed);
    // A name declared in another section is no typo: say what this place accepts instead of
    // suggesting a look-alike.
    if (const char* section = declared_as(e.name)) {
      diags_.error(ErrorKind::undefined_symbol, e.loc, fmt::format("`{}` cannot be used in {}", e.name, where),
                   fmt::format("`{}` is {}; {}", e.name, section, may_use));
      return;
    }
    std::vector<std::string> candidates;
    if (scope & dims) for (const auto& d : k_.dims) candidates.push_back(d.name);
    if (scope & tunables) for (const auto& t : k_.tunables) candidates.push_back(t.name);
    if (is_size_of) for (const auto& t : k_.type_params) candidates.push_back(t.name);
    std::string s = support::did_you_mean(e.name, candidates);
    diags_.error(ErrorKind::undefined_symbol, e.loc, fmt::format("undefined name `{}` in {}", e.name, where),
                 s.empty() ? may_use : fmt::format("did you mean `{}`?", s));
  }

  // Whether `e` names a tunable or a type parameter (in sizeof): its value differs between variants.
  bool mentions_variant(const expr::Expr& e) const {
    std::set<std::string> used;
    e.collect_symbols(used);
    auto named = [&](const auto& list) {
      return std::any_of(list.begin(), list.end(), [&](const auto& x) { return used.count(x.name) > 0; });
    };
    return named(k_.tunables) || named(k_.type_params);
  }

  // The section that declares `name` ("a dim", "a tunable", ...); null when none does.
  const char* declared_as(const std::string& name) const {
    auto in = [&](const auto& list) {
      return std::any_of(list.begin(), list.end(), [&](const auto& x) { return x.name == name; });
    };
    if (in(k_.dims)) return "a dim";
    if (in(k_.tunables)) return "a tunable";
    if (in(k_.scalars)) return "a scalar";
    if (in(k_.buffers)) return "a buffer";
    if (in(k_.type_params)) return "a type parameter";
    return nullptr;
  }

  void check_expressions() {
    for (const auto& b : k_.buffers) {
      if (b.shape.empty()) diags_.error(ErrorKind::missing_field, b.loc, fmt::format("buffer `{}` has an empty shape", b.name),
                                      "give the element count per axis, e.g. `shape: [rows, n]`");
      for (const auto& e : b.shape) check_symbols(e, dims | tunables | types, "a buffer shape");
    }
    for (const auto& a : k_.threadgroup_arrays) check_symbols(a.count, tunables | types, "a threadgroup array count");
    for (auto& p : k_.preconditions) {
      check_symbols(p.check, dims | tunables | types, "a precondition");
      p.per_variant = mentions_variant(p.check);
    }
    if (!k_.is_family()) check_dispatch();
    for (const auto* c : k_.cost.formulas()) check_symbols(*c, dims | tunables | types, "a cost formula");
    check_cost_quantity_names();
  }

  // Each extra quantity becomes a field of the generated `Cost` struct beside the three fixed ones.
  void check_cost_quantity_names() {
    for (const auto& q : k_.cost.extra) {
      check_identifier(q.name, q.loc, "cost quantity");
      if (q.name == "bytes_read" || q.name == "bytes_written" || q.name == "flops") {
        diags_.error(ErrorKind::duplicate_name, q.loc, fmt::format("cost quantity `{}` repeats a key of `cost`", q.name),
                     fmt::format("write `{}` directly under `cost:`, or give the quantity another name", q.name));
      }
    }
  }

  void check_dispatch() {
    auto& d = k_.dispatch;
    int rank = d.rank();
    if (rank < 1 || rank > 3 || d.threads_per_threadgroup.size() != d.threadgroups.size()) {
      diags_.error(ErrorKind::bad_value, d.loc, "dispatch needs 1 to 3 axes, the same number in both lists",
                   "e.g. `threadgroups: [rows]` and `threads_per_threadgroup: [TG]`");
    }
    for (const auto& e : d.threadgroups) check_symbols(e, dims | tunables | types, "dispatch threadgroups");
    check_threads_from_dims(d);
    for (const auto& e : d.threads_per_threadgroup) check_symbols(e, dims | tunables, "threads_per_threadgroup");
  }

  // A threadgroup size computed from the dims needs its largest value declared: threadgroup
  // memory, max_total_threads_per_threadgroup and the pipelines' limits are fixed per variant.
  void check_threads_from_dims(ir::Dispatch& d) {
    const expr::Expr* by_dims = nullptr;
    for (const auto& e : d.threads_per_threadgroup) {
      std::set<std::string> used;
      e.collect_symbols(used);
      for (const auto& dim : k_.dims) {
        if (used.count(dim.name) && !by_dims) by_dims = &e;
      }
    }
    d.threads_from_dims = by_dims != nullptr && d.max_threads.has_value();
    if (d.max_threads) check_symbols(*d.max_threads, tunables, "max_threads_per_threadgroup");
    if (by_dims && !d.max_threads) {
      diags_.error(ErrorKind::missing_field, by_dims->loc, "threads_per_threadgroup depends on the dims but has no maximum",
                   "declare its largest value under `dispatch:`, e.g. `max_threads_per_threadgroup: 1024` (tunables "
                   "allowed): the kernel's threadgroup memory and pipelines are sized for it");
    } else if (!by_dims && d.max_threads) {
      diags_.error(ErrorKind::bad_value, d.max_threads->loc,
                   "max_threads_per_threadgroup is for a threadgroup size computed from the dims",
                   "threads_per_threadgroup depends on tunables only, so it is its own maximum: drop this key");
    }
  }

  // ---- buffers ----
  void assign_buffer_indices() {
    std::map<int, const ir::Buffer*> used;
    for (const auto& b : k_.buffers) {
      if (!b.explicit_index) continue;
      if (b.index < 0 || b.index > kMaxBufferIndex) {
        diags_.error(ErrorKind::bad_value, b.index_loc, fmt::format("buffer index {} is out of range", b.index),
                     fmt::format("Metal buffer indices are 0..{}", kMaxBufferIndex));
      } else if (auto [it, ok] = used.emplace(b.index, &b); !ok) {
        diags_.error(ErrorKind::buffer_index_collision, b.index_loc,
                     fmt::format("buffer `{}` uses index {}, already taken by `{}`", b.name, b.index, it->second->name),
                     "give each buffer its own index, or drop `index:` to let mtlgen assign one");
      }
    }
    int next = 0;
    auto take = [&]() {
      while (used.count(next)) ++next;
      return next++;
    };
    for (auto& b : k_.buffers) {
      if (!b.explicit_index) b.index = take();
    }
    k_.params_index = take();
    if (k_.params_index > kMaxBufferIndex) {
      diags_.error(ErrorKind::bad_value, k_.name_loc, "too many buffers for Metal's argument table",
                   fmt::format("at most {} buffers plus the parameter struct", kMaxBufferIndex));
    }
  }

  // ---- function constants ----
  void check_function_constants() {
    std::map<int64_t, const ir::FunctionConstant*> used;
    for (const auto& f : k_.function_constants) {
      if (f.index < 0 || f.index > kMaxFunctionConstantIndex) {
        diags_.error(ErrorKind::bad_value, f.index_loc,
                     fmt::format("function constant index {} is out of range", f.index),
                     fmt::format("function constant indices are 0..{}", kMaxFunctionConstantIndex));
      } else if (auto [it, ok] = used.emplace(f.index, &f); !ok) {
        diags_.error(ErrorKind::function_constant_index_collision, f.index_loc,
                     fmt::format("function constant `{}` uses index {}, already taken by `{}`", f.name, f.index,
                                 it->second->name),
                     "give each function constant its own index: the host sets values by index");
      }
      check_constant_value(f, f.default_value, f.default_loc.line ? f.default_loc : f.loc);
    }
  }

  // Integer constants take integers their type can hold; bool and float constants take any value
  // the parser accepted.
  void check_constant_value(const ir::FunctionConstant& f, double value, const SourceLoc& loc) {
    const auto& t = ir::info(f.type);
    if (t.is_float || f.type == ir::ScalarType::boolean) return;
    double lo = t.is_signed ? -std::ldexp(1.0, 8 * t.size - 1) : 0;
    double hi = t.is_signed ? std::ldexp(1.0, 8 * t.size - 1) - 1 : std::ldexp(1.0, 8 * t.size) - 1;
    if (std::isfinite(value) && std::trunc(value) == value && value >= lo && value <= hi) return;
    diags_.error(ErrorKind::bad_value, loc, fmt::format("{:g} is not a value of function constant `{}`", value, f.name),
                 fmt::format("`{}` is {}: an integer from {:.0f} to {:.0f}", f.name, t.spec_name, lo, hi));
  }

  // `constants:` of a test case (`where` names it) or of the whole plan.
  void check_test_constants(const std::map<std::string, ir::ConstantValues>& constants, const std::string& where) {
    for (const auto& [name, cv] : constants) {
      auto f = std::find_if(k_.function_constants.begin(), k_.function_constants.end(),
                            [&](const ir::FunctionConstant& x) { return x.name == name; });
      if (f == k_.function_constants.end()) {
        unknown_constant(name, cv.loc, where);
        continue;
      }
      if (cv.values.empty()) {
        diags_.error(ErrorKind::bad_value, cv.loc, fmt::format("{}: `{}` lists no values", where, name),
                     "give a value, or a list of the values to run every case at");
      }
      std::set<double> seen;
      for (size_t i = 0; i < cv.values.size(); ++i) {
        check_constant_value(*f, cv.values[i], cv.value_locs[i]);
        if (!std::isnan(cv.values[i]) && !seen.insert(cv.values[i]).second) {
          diags_.error(ErrorKind::bad_value, cv.value_locs[i], fmt::format("{}: `{}` lists a value twice", where, name),
                       "each listed value runs the case once more; list each value once");
        }
      }
    }
  }

  void unknown_constant(const std::string& name, const SourceLoc& loc, const std::string& where) {
    std::vector<std::string> names;
    for (const auto& f : k_.function_constants) names.push_back(f.name);
    std::string s = support::did_you_mean(name, names);
    std::string hint = !s.empty()      ? fmt::format("did you mean `{}`?", s)
                       : names.empty() ? std::string("the kernel declares no function_constants")
                                       : fmt::format("its function constants are: {}", fmt::join(names, ", "));
    diags_.error(ErrorKind::test_case, loc, fmt::format("{}: `{}` is not a function constant", where, name), hint);
  }

  // ---- blocks, alignment and fills ----
  std::vector<ir::ScalarType> types_of(const ir::TypeRef& t) const {
    if (t.concrete) return {*t.concrete};
    for (const auto& p : k_.type_params) if (p.name == t.param) return p.types;
    return {};
  }

  void check_blocks() {
    for (const auto& layout : k_.blocks) check_identifier(layout.name, layout.loc, "block");
    for (const auto& b : k_.buffers) {
      if (!b.block.empty()) check_buffer_block(b);
      for (auto t : types_of(b.type)) {
        uint64_t size = static_cast<uint64_t>(ir::info(t).size);
        if (b.alignment && b.alignment < size) {
          diags_.error(ErrorKind::bad_value, b.alignment_loc,
                       fmt::format("alignment {} is below the {} bytes of `{}`'s {} elements", b.alignment, size,
                                   b.name, ir::info(t).spec_name),
                       "Metal aligns a buffer's elements to their size already; state a larger alignment or none");
          break;
        }
      }
    }
  }

  void check_buffer_block(const ir::Buffer& b) {
    if (!k_.block_of(b)) {
      std::vector<std::string> names;
      for (const auto& layout : k_.blocks) names.push_back(layout.name);
      std::string s = support::did_you_mean(b.block, names);
      diags_.error(ErrorKind::undefined_symbol, b.block_loc, fmt::format("no block named `{}`", b.block),
                   !s.empty()      ? fmt::format("did you mean `{}`?", s)
                   : names.empty() ? std::string("declare its layout under `blocks:`, e.g. `q8_0: {d: half, qs: \"int8[32]\"}`")
                                   : fmt::format("blocks: {}", fmt::join(names, ", ")));
    } else if (!b.type.concrete || ir::info(*b.type.concrete).size != 1 || ir::info(*b.type.concrete).is_float) {
      diags_.error(ErrorKind::bad_value, b.block_loc, fmt::format("`{}` holds blocks but its elements are not bytes", b.name),
                   "a buffer of blocks is raw bytes: write `type: bytes` (or uint8, int8) and size its shape in bytes");
    }
  }

  // A fill must produce values its integer element type holds: clamping `uniform -128..127` into a
  // uint8 would test something else than the spec says. (A float type rounds what it cannot hold
  // to ±inf, as the GPU's conversion does: `1e6` in a half is a way to write inf.)
  void check_fills() {
    const ir::TestCase no_fills;
    for (const auto& b : k_.buffers) {
      if (b.access == ir::Access::write || b.intermediate) continue;  // never filled
      bool default_used = false;
      for (const auto& c : k_.tests.cases) {
        if (!c.inputs.count(b.name)) default_used = true;
        else check_buffer_fill(b, k_.input_fill(c, b.name), c.inputs.at(b.name).loc);
      }
      if (default_used) check_buffer_fill(b, k_.input_fill(no_fills, b.name), k_.tests.default_fill.loc);
    }
  }

  void check_buffer_fill(const ir::Buffer& b, const ir::InputFill& fill, const SourceLoc& loc) {
    if (const ir::BlockLayout* layout = k_.block_of(b)) {
      for (const auto& given : fill.fields) {
        const ir::BlockField* f = layout->field(given.field);
        if (!f) continue;
        bool implicit = !given.fill.loc.line && !loc.line;  // the unwritten default: at the field
        SourceLoc at = implicit ? f->loc : given.fill.loc.line ? given.fill.loc : loc;
        check_fill_range(given.fill, f->type, fmt::format("field `{}` of `{}`", f->name, b.name), at, implicit);
      }
      return;
    }
    // The unwritten default (normal, mean 0, std 1) is reported at the buffer it does not fit.
    bool implicit = !fill.loc.line && !loc.line;
    for (auto t : types_of(b.type)) {
      if (!check_fill_range(fill, t, fmt::format("`{}`", b.name), implicit ? b.loc : fill.loc.line ? fill.loc : loc,
                            implicit)) {
        return;
      }
    }
  }

  bool check_fill_range(const ir::InputFill& f, ir::ScalarType t, const std::string& what, const SourceLoc& loc,
                        bool implicit = false) {
    const auto& ti = ir::info(t);
    auto fail = [&](const std::string& problem, const std::string& hint) {
      diags_.error(ErrorKind::bad_value, loc, fmt::format("{} ({}): {}", what, ti.spec_name, problem),
                   implicit ? "no fill is written for it, so it gets the default, normal(0, 1): give it one under "
                              "`tests.inputs` or in its test cases"
                            : hint);
      return false;
    };
    if (ti.is_float) {
      if (f.dist != ir::Distribution::bits || !f.explicit_dist) return true;
      return fail("`bits` would make NaNs and infinities at random", "use a distribution, with `nan:`/`inf:` shares where wanted");
    }
    double lo = 0, hi = 0;
    integer_range(t, lo, hi);
    std::string range = fmt::format("{}..{}", lo, hi);
    auto out = [&](double v) { return !std::isfinite(v) || v < lo || v > hi; };
    if (f.nan_fraction > 0 || f.inf_fraction > 0 || f.neg_inf_fraction > 0) {
      return fail("integers have no NaN or infinity", "drop `nan:`/`inf:`/`-inf:` for integer buffers");
    }
    switch (f.dist) {
      case ir::Distribution::uniform:
        if (out(f.a) || out(f.b)) return fail(fmt::format("uniform {:g}..{:g} leaves {}", f.a, f.b, range), "narrow min and max");
        break;
      case ir::Distribution::normal:
        if (out(f.a - 4 * f.b) || out(f.a + 4 * f.b)) {
          return fail(fmt::format("normal(mean {:g}, std {:g}) leaves {} (mean ± 4 std)", f.a, f.b, range),
                      "use uniform or choice for integers, or a smaller std");
        }
        break;
      case ir::Distribution::constant:
      case ir::Distribution::iota:
        if (out(f.a)) return fail(fmt::format("{:g} is outside {}", f.a, range), "choose a value the type holds");
        break;
      case ir::Distribution::choice:
        for (double v : f.values) {
          if (out(v)) return fail(fmt::format("choice {:g} is outside {}", v, range), "choose values the type holds");
        }
        break;
      case ir::Distribution::bits: break;
    }
    for (const auto& [index, v] : f.set) {
      if (out(v)) return fail(fmt::format("set {}: {:g} is outside {}", index, v, range), "choose a value the type holds");
    }
    return true;
  }

  static void integer_range(ir::ScalarType t, double& lo, double& hi) {
    switch (t) {
      case ir::ScalarType::f32:
      case ir::ScalarType::f16:
      case ir::ScalarType::bf16: break;  // not integers: never asked
      case ir::ScalarType::i8: lo = -128, hi = 127; break;
      case ir::ScalarType::i16: lo = -32768, hi = 32767; break;
      case ir::ScalarType::i32: lo = -2147483648.0, hi = 2147483647.0; break;
      case ir::ScalarType::u8:
      case ir::ScalarType::bytes: hi = 255; break;
      case ir::ScalarType::u16: hi = 65535; break;
      case ir::ScalarType::u32: hi = 4294967295.0; break;
      case ir::ScalarType::boolean: hi = 1; break;
    }
  }

  // ---- body ----
  void scan_body() {
    auto tokens = support::identifier_tokens(k_.body.text);
    for (size_t i = 0; i < tokens.size(); ++i) scan_token(tokens, i);
    // Functions of the Metal preludes may call helpers too; they see no dims or builtins.
    for (const ir::CodeBlock* block : {&k_.prelude, &k_.metal_prelude}) {
      for (const auto& t : support::identifier_tokens(block->text)) note_helper(t.text);
    }
    for (auto h : std::set<ir::Helper>(k_.helpers_used)) add_helper(h);
    check_threadgroup_declarations();
  }

  void scan_token(const std::vector<support::Token>& tokens, size_t i) {
    const std::string& t = tokens[i].text;
    if (auto b = ir::builtin_from_name(t)) k_.builtins_used.insert(*b);
    for (const auto& d : k_.dims) if (d.name == t) k_.params_used_in_body.insert(t);
    for (const auto& s : k_.scalars) if (s.name == t) k_.params_used_in_body.insert(t);
    note_helper(t);
    if (t.rfind("tg_", 0) == 0 && !ir::builtin_from_name(t) && is_call(tokens[i]) && !is_helper(t)) {
      std::vector<std::string> names;
      for (const auto& h : ir::all_helpers()) names.push_back(h.name);
      std::string s = support::did_you_mean(t, names);
      diags_.error(ErrorKind::unknown_helper, body_loc(tokens[i]), fmt::format("mtlgen provides no helper `{}`", t),
                   s.empty() ? fmt::format("helpers are: {}", fmt::join(names, ", ")) : fmt::format("did you mean `{}`?", s));
    }
  }

  void note_helper(const std::string& t) {
    for (const auto& h : ir::all_helpers()) {
      bool named = t == h.name || std::find(h.also_named.begin(), h.also_named.end(), t) != h.also_named.end();
      if (named) k_.helpers_used.insert(h.helper);
    }
  }

  // True when the token is followed by `(` or `<`: a call, possibly with template arguments.
  bool is_call(const support::Token& t) const {
    const std::string& text = k_.body.text;
    size_t pos = text.find_first_not_of(" \t", offset_of(text, t) + t.text.size());
    if (pos == std::string::npos) return false;
    if (text[pos] == '(') return true;
    if (text[pos] != '<') return false;
    size_t close = text.find_first_of(">;{}", pos);  // template arguments end before the statement does
    if (close == std::string::npos || text[close] != '>') return false;
    size_t after = text.find_first_not_of(" \t", close + 1);
    return after != std::string::npos && text[after] == '(';
  }
  static bool is_helper(const std::string& t) {
    return std::any_of(ir::all_helpers().begin(), ir::all_helpers().end(),
                       [&](const ir::HelperInfo& h) { return t == h.name; });
  }

  void add_helper(ir::Helper h) {
    k_.helpers_used.insert(h);
    for (auto need : ir::info(h).needs) add_helper(need);
  }

  SourceLoc body_loc(const support::Token& t) const {
    SourceLoc l = k_.body.loc;
    l.line += t.line - 1;
    l.column = (t.line == 1 ? l.column : k_.body.loc.column) + t.column - 1;
    return l;
  }

  // Threadgroup memory declared inside the body would be per-thread in the simulator and is
  // invisible to the host's size checks: it must be declared under `threadgroup_memory:`.
  void check_threadgroup_declarations() {
    auto tokens = support::identifier_tokens(k_.body.text);
    const std::string& text = k_.body.text;
    for (const auto& t : tokens) {
      if (t.text != "threadgroup") continue;
      size_t offset = offset_of(text, t);
      size_t end = text.find_first_of(";=[(){", offset);
      std::string_view decl(text.data() + offset, (end == std::string::npos ? text.size() : end) - offset);
      bool pointer_or_ref = decl.find('*') != std::string_view::npos || decl.find('&') != std::string_view::npos;
      if (!pointer_or_ref && end != std::string::npos && (text[end] == '[' || text[end] == ';' || text[end] == '=')) {
        diags_.error(ErrorKind::body_declaration, body_loc(t), "threadgroup memory declared inside the body",
                     "declare it under `threadgroup_memory:` so the host sizes it and checks the 32 KiB limit");
      }
    }
  }

  static size_t offset_of(const std::string& text, const support::Token& t) {
    size_t pos = 0;
    for (int line = 1; line < t.line; ++line) pos = text.find('\n', pos) + 1;
    return pos + t.column - 1;
  }

  // ---- variants ----
  std::vector<std::map<std::string, ir::ScalarType>> type_combinations() const {
    if (!k_.type_tuples.empty()) return k_.type_tuples;
    std::vector<std::map<std::string, ir::ScalarType>> out = {{}};
    for (const auto& p : k_.type_params) {
      std::vector<std::map<std::string, ir::ScalarType>> next;
      for (const auto& partial : out) {
        for (auto t : p.types) {
          auto m = partial;
          m[p.name] = t;
          next.push_back(std::move(m));
        }
      }
      out = std::move(next);
    }
    return out;
  }

  std::vector<std::map<std::string, int64_t>> tune_points() const {
    std::vector<std::map<std::string, int64_t>> out = {{}};
    for (const auto& t : k_.tunables) {
      std::vector<std::map<std::string, int64_t>> next;
      for (const auto& partial : out) {
        for (auto v : t.values) {
          auto m = partial;
          m[t.name] = v;
          next.push_back(std::move(m));
        }
      }
      out = std::move(next);
    }
    return out;
  }

  std::string entry_point(const std::map<std::string, ir::ScalarType>& types,
                          const std::map<std::string, int64_t>& tune) const {
    std::string name = k_.name;
    for (const auto& p : k_.type_params) name += "_" + std::string(ir::info(types.at(p.name)).suffix);
    for (const auto& t : k_.tunables) name += fmt::format("_{}{}", support::lower_ascii(t.name), tune.at(t.name));
    return name;
  }

  expr::Env env_for(const std::map<std::string, ir::ScalarType>& types, const std::map<std::string, int64_t>& tune) const {
    expr::Env env;
    for (const auto& [name, value] : tune) env.symbols[name] = value;
    for (const auto& [name, type] : types) env.type_sizes[name] = ir::info(type).size;
    ir::add_concrete_type_sizes(env.type_sizes);
    return env;
  }

  // Types x tune points, counted before either list is built: 8 type parameters x 10 types
  // would be 10^8 maps. Saturates instead of overflowing.
  uint64_t variant_count() const {
    uint64_t count = 1;
    auto times = [&](size_t n) {
      if (__builtin_mul_overflow(count, std::max<uint64_t>(n, 1), &count)) count = UINT64_MAX;
    };
    for (const auto& p : k_.type_params) times(p.types.size());
    for (const auto& t : k_.tunables) times(t.values.size());
    return count;
  }

  void build_variants() {
    if (uint64_t count = variant_count(); count > kMaxVariants) {
      std::string how_many = count == UINT64_MAX ? "more than 2^64" : std::to_string(count);
      diags_.error(ErrorKind::bad_value, k_.name_loc,
                   fmt::format("too many variants: {}; at most {} are allowed", how_many, kMaxVariants),
                   "trim the type lists or the tunable values (variants = type combinations x tune points)");
      return;
    }
    auto types = type_combinations();
    auto points = tune_points();
    std::set<std::string> reported, entry_points;
    for (const auto& tmap : types) {
      for (const auto& point : points) {
        auto v = make_variant(tmap, point, reported);
        if (!v) continue;
        if (!entry_points.insert(v->entry_point).second) {
          diags_.error(ErrorKind::duplicate_name, k_.type_params.empty() ? k_.name_loc : k_.type_params[0].loc,
                       fmt::format("two variants would share the entry point `{}`", v->entry_point),
                       "list each type once per parameter; uint8 and bytes share the suffix u8");
          return;
        }
        k_.variants.push_back(std::move(*v));
      }
    }
    k_.msl_version = "3.0";
    for (const auto& v : k_.variants) {
      for (const auto& [name, t] : v.types) k_.msl_version = std::max(k_.msl_version, ir::min_msl_version(t));
    }
    auto raise = [&](const ir::TypeRef& t) {
      if (t.concrete) k_.msl_version = std::max(k_.msl_version, ir::min_msl_version(*t.concrete));
    };
    for (const auto& a : k_.threadgroup_arrays) raise(a.type);
    for (const auto& b : k_.buffers) raise(b.type);
    for (const auto& f : k_.function_constants) raise(ir::TypeRef{f.type, "", f.loc});
  }

  std::optional<ir::Variant> make_variant(const std::map<std::string, ir::ScalarType>& types,
                                          const std::map<std::string, int64_t>& point, std::set<std::string>& reported) {
    ir::Variant v;
    v.types = types;
    v.tunables = point;
    v.entry_point = entry_point(types, point);
    v.is_default_tuning = std::all_of(k_.tunables.begin(), k_.tunables.end(),
                                      [&](const ir::Tunable& t) { return point.at(t.name) == t.default_value; });
    expr::Env env = env_for(types, point);
    SourceLoc at = k_.dispatch.loc;  // the expression being evaluated
    try {
      v.threads_per_threadgroup = 1;
      if (k_.dispatch.threads_from_dims) {  // the declared maximum; the shape is the problem's
        at = k_.dispatch.max_threads->loc;
        v.threads_per_threadgroup = expr::evaluate(*k_.dispatch.max_threads, env);
      }
      for (const auto& e : k_.dispatch.threads_from_dims ? std::vector<expr::Expr>{} : k_.dispatch.threads_per_threadgroup) {
        at = e.loc;
        v.threadgroup_shape.push_back(expr::evaluate(e, env));
        // [192, 192153584101141163] once wrapped to 64 threads; saturated, it fails the size check below.
        if (__builtin_mul_overflow(v.threads_per_threadgroup, v.threadgroup_shape.back(), &v.threads_per_threadgroup)) {
          v.threads_per_threadgroup = INT64_MAX;
        }
      }
      int64_t total = 0;
      for (const auto& a : k_.threadgroup_arrays) {
        int64_t count = evaluate_count(a, env, v);
        if (count <= 0) return std::nullopt;
        int64_t bytes = 0;
        // Saturated rather than wrapped: any byte count this large fails the 32 KiB check.
        if (__builtin_mul_overflow(count, int64_t{ir::info(a.type.resolve(types)).size}, &bytes) || bytes > INT64_MAX / 2) {
          bytes = INT64_MAX / 2;
        }
        v.threadgroup_array_bytes.push_back(bytes);
        total = std::min(total + round_up_16(bytes), INT64_MAX / 2);
      }
      if (!k_.is_family()) check_variant_limits(v, total, reported);
    } catch (const expr::EvalError& err) {
      diags_.error(ErrorKind::bad_expression, at, fmt::format("at {}: {}", v.entry_point, err.message),
                   "threads_per_threadgroup must evaluate at every tune point and type: check its divisors and sizes");
      return std::nullopt;
    }
    return v;
  }

  // A threadgroup array's element count at one variant; <= 0 after reporting a problem.
  int64_t evaluate_count(const ir::ThreadgroupArray& a, const expr::Env& env, const ir::Variant& v) {
    try {
      int64_t count = expr::evaluate(a.count, env);
      if (count > 0) return count;
      diags_.error(ErrorKind::threadgroup_memory, a.count.loc,
                   fmt::format("threadgroup array `{}` has {} elements at {}", a.name, count, tune_text(v)),
                   "a threadgroup array needs at least one element at every tune point");
    } catch (const expr::EvalError& err) {
      diags_.error(ErrorKind::bad_expression, a.count.loc, fmt::format("at {}: {}", v.entry_point, err.message),
                   "make the count valid for every tunable value");
    }
    return 0;
  }

  std::string tune_text(const ir::Variant& v) const {
    std::vector<std::string> parts;
    for (const auto& [name, value] : v.tunables) parts.push_back(fmt::format("{}={}", name, value));
    return parts.empty() ? "the fixed configuration" : fmt::format("{}", fmt::join(parts, ", "));
  }

  void check_variant_limits(const ir::Variant& v, int64_t tg_bytes, std::set<std::string>& reported) {
    std::string where = tune_text(v);
    SourceLoc loc = k_.dispatch.threads_per_threadgroup.empty() ? k_.dispatch.loc
                                                                : k_.dispatch.threads_per_threadgroup[0].loc;
    int64_t n = v.threads_per_threadgroup;
    if (k_.dispatch.threads_from_dims) {  // any size up to the maximum: partial simdgroups are the kernel's business
      loc = k_.dispatch.max_threads->loc;
      if ((n > kMaxThreadsPerThreadgroup || n <= 0) && reported.insert("max:" + std::to_string(n)).second) {
        diags_.error(ErrorKind::threadgroup_size, loc, fmt::format("max_threads_per_threadgroup is {} at {}", n, where),
                     "threadgroups hold 1 to 1024 threads");
      }
    } else if ((n % 32 != 0 || n > kMaxThreadsPerThreadgroup || n <= 0) && reported.insert("tg:" + where).second) {
      diags_.error(ErrorKind::threadgroup_size, loc,
                   fmt::format("{} threads per threadgroup at {}", n == INT64_MAX ? "more than 2^63" : std::to_string(n), where),
                   "threadgroups must be a multiple of 32 threads (one simdgroup) and at most 1024");
    }
    if (tg_bytes > kMaxThreadgroupBytes && reported.insert("mem:" + where).second) {
      SourceLoc mem_loc = k_.threadgroup_arrays.empty() ? loc : k_.threadgroup_arrays[0].loc;
      diags_.error(ErrorKind::threadgroup_memory, mem_loc,
                   fmt::format("{} bytes of threadgroup memory at {}", tg_bytes, where),
                   fmt::format("Apple GPUs offer {} bytes per threadgroup; shrink the arrays or the tune space",
                               kMaxThreadgroupBytes));
    }
  }

  // ---- binding table ----
  void add_param(ir::KernelParam::Kind kind, size_t ref, int index, ir::Builtin builtin = {}) {
    ir::KernelParam p;
    p.kind = kind;
    p.ref = ref;
    p.index = index;
    p.builtin = builtin;
    k_.params.push_back(p);
  }

  void build_bindings() {
    using Kind = ir::KernelParam::Kind;
    // The reference sees dims and scalars the same way for every kernel; a hand-written kernel's
    // own parameters are bound per variant (Variant::source_params).
    for (const auto& d : k_.dims) k_.params_fields.push_back({d.name, ir::ScalarType::u32, true});
    for (const auto& s : k_.scalars) k_.params_fields.push_back({s.name, s.type, false});
    if (k_.is_source() || k_.is_family()) return;
    for (size_t i = 0; i < k_.buffers.size(); ++i) add_param(Kind::buffer, i, k_.buffers[i].index);
    add_param(Kind::params, 0, k_.params_index);
    for (size_t i = 0; i < k_.threadgroup_arrays.size(); ++i) {
      k_.threadgroup_arrays[i].index = static_cast<int>(i);
      add_param(Kind::threadgroup_array, i, static_cast<int>(i));
    }
    for (auto b : k_.builtins_used) add_param(Kind::builtin, 0, 0, b);
  }

  // ---- kernel families ----
  void validate_members();
  void check_family_dispatches();
  void bind_dispatch(ir::FamilyDispatch& d, const ir::Kernel& m);
  void check_dispatch_types(const ir::FamilyDispatch& d, const ir::Kernel& m);
  void check_dispatch_buffers(const ir::FamilyDispatch& d, const ir::Kernel& m, std::set<std::string>& written);
  void check_family_case(const ir::TestCase& c, const std::map<std::string, int64_t>& dims);

  // ---- tests ----
  void check_tests();
  void check_case(const ir::TestCase& c);
  void check_case_runs_somewhere(const ir::TestCase& c, const std::map<std::string, int64_t>& dims);
  void check_case_sizes(const ir::TestCase& c, const std::map<std::string, int64_t>& dims);
  std::optional<std::pair<expr::Expr, std::string>> threads_problem(const ir::Variant& v, const expr::Env& env);
  static std::optional<std::pair<expr::Expr, std::string>> byte_size_problem(const std::vector<expr::Expr>& axes,
                                                                             int64_t element_size, const expr::Env& env);

  ir::Kernel& k_;
  // This spec's errors only: `check` runs many specs against one Diagnostics.
  bool has_errors() const { return diags_.error_count() > errors_before_; }

  Diagnostics& diags_;
  int errors_before_;
  VariantBinder bind_variants_;
  std::map<std::string, SourceLoc> declared_;
};

void Validator::check_tests() {
  if (k_.tests.cases.empty()) {
    diags_.error(ErrorKind::missing_field, k_.name_loc, "the spec declares no test cases",
                 "add `tests: cases:` with at least one edge shape and one realistic shape");
  } else if (std::all_of(k_.tests.cases.begin(), k_.tests.cases.end(), [](const auto& c) { return c.benchmark; })) {
    diags_.error(ErrorKind::missing_field, k_.tests.cases.front().loc, "every test case is a benchmark case",
                 "verify does not run benchmark cases: add a case without `benchmark: true` at a shape it can run");
  }
  check_test_constants(k_.tests.constants, "tests.constants");
  check_fills();
  std::set<std::string> names;
  for (const auto& c : k_.tests.cases) {  // the parser checked each name, located at the name
    if (!names.insert(c.name).second) {
      diags_.error(ErrorKind::duplicate_name, c.loc, fmt::format("two test cases are named `{}`", c.name),
                   "`mtlgen verify --case NAME` selects cases by name: make each name unique");
    }
    check_case(c);
  }
}

void Validator::check_case(const ir::TestCase& c) {
  auto fail = [&](std::string msg, std::string hint) {
    diags_.error(ErrorKind::test_case, c.loc, fmt::format("test case `{}`: {}", c.name, msg), std::move(hint));
  };
  expr::Env env;
  ir::add_concrete_type_sizes(env.type_sizes);
  for (const auto& d : k_.dims) {
    auto it = c.dims.find(d.name);
    if (it == c.dims.end()) {
      fail(fmt::format("no value for dim `{}`", d.name), "every test case gives every dim");
      continue;
    }
    int64_t v = it->second;
    if (v > UINT32_MAX) {
      fail(fmt::format("{} = {} does not fit the 32-bit dims of the parameter struct", d.name, v), "use a smaller shape");
    } else if (v < d.min || (d.max && v > *d.max) || v % d.multiple_of != 0) {
      fail(fmt::format("{} = {} violates its constraints", d.name, v),
           fmt::format("min {}, max {}, multiple of {}", d.min, d.max ? std::to_string(*d.max) : "none", d.multiple_of));
    }
    env.symbols[d.name] = v;
  }
  auto declared = [](const auto& list, const std::string& name) {
    return std::any_of(list.begin(), list.end(), [&](const auto& x) { return x.name == name; });
  };
  for (const auto& [name, value] : c.dims) {
    if (!env.symbols.count(name) && !declared(k_.dims, name)) {
      fail(fmt::format("`{}` is not a dim", name), "test cases give values for dims only");
    }
  }
  for (const auto& entry : c.inputs) {
    const std::string& name = entry.first;
    bool input = std::any_of(k_.buffers.begin(), k_.buffers.end(),
                             [&](const ir::Buffer& b) {
                               return b.name == name && b.access != ir::Access::write && !b.intermediate;
                             });
    if (!input) fail(fmt::format("`{}` is not an input buffer", name), "inputs are buffers with access read or read_write");
  }
  for (const auto& [name, value] : c.scalars) {
    if (!declared(k_.scalars, name)) {
      fail(fmt::format("`{}` is not a scalar", name), "scalars: gives only declared scalars");
    }
  }
  check_test_constants(c.constants, fmt::format("test case `{}`", c.name));
  if (env.symbols.size() != k_.dims.size()) return;
  for (const auto& p : k_.preconditions) {
    if (p.per_variant) continue;
    try {
      if (!expr::evaluate(p.check, env)) fail(fmt::format("violates precondition: {}", p.message), "fix the dims");
    } catch (const expr::EvalError& e) {
      fail(e.message, "fix the dims");
    }
  }
  if (k_.has_per_variant_preconditions()) check_case_runs_somewhere(c, env.symbols);
  check_case_sizes(c, env.symbols);
  if (k_.is_family()) check_family_case(c, env.symbols);
}

// ---- kernel families ----

void Validator::validate_members() {
  auto family = std::make_shared<ir::Family>(*k_.family);
  for (auto& m : family->kernels) {
    if (m.name == k_.name) {
      diags_.error(ErrorKind::duplicate_name, m.name_loc, fmt::format("kernel `{}` has the family's name", m.name),
                   "the family's files and each kernel's share one output directory: rename one");
    }
    if (m.is_source()) {
      diags_.error(ErrorKind::unknown_key, m.name_loc, fmt::format("kernel `{}` is hand-written (`source:`)", m.name),
                   "family members have a `body:`; hand-written kernels cannot join a family yet");
      continue;
    }
    validate_kernel(m, diags_);
  }
  k_.family = std::move(family);
}

void Validator::check_family_dispatches() {
  auto family = std::make_shared<ir::Family>(*k_.family);
  if (family->dispatches.empty()) {
    diags_.error(ErrorKind::missing_field, family->loc, "the family lists no dispatches",
                 "list the kernels in the order they run under `dispatches:`");
  }
  std::set<std::string> written;  // family buffers some earlier dispatch wrote
  std::set<size_t> dispatched;
  for (auto& d : family->dispatches) {
    auto it = std::find_if(family->kernels.begin(), family->kernels.end(), [&](const ir::Kernel& m) { return m.name == d.kernel; });
    if (it == family->kernels.end()) {
      std::vector<std::string> names;
      for (const auto& m : family->kernels) names.push_back(m.name);
      std::string s = support::did_you_mean(d.kernel, names);
      diags_.error(ErrorKind::undefined_symbol, d.loc, fmt::format("no kernel `{}` under `kernels:`", d.kernel),
                   s.empty() ? fmt::format("the family's kernels are: {}", fmt::join(names, ", "))
                             : fmt::format("did you mean `{}`?", s));
      continue;
    }
    d.member = static_cast<size_t>(it - family->kernels.begin());
    dispatched.insert(d.member);
    if (it->variants.empty()) continue;  // the kernel was rejected; its errors say why
    bind_dispatch(d, *it);
    if (has_errors()) continue;
    check_dispatch_types(d, *it);
    check_dispatch_buffers(d, *it, written);
  }
  for (size_t i = 0; i < family->kernels.size(); ++i) {
    if (dispatched.count(i) || has_errors()) continue;
    diags_.error(ErrorKind::bad_value, family->kernels[i].name_loc,
                 fmt::format("kernel `{}` is never dispatched", family->kernels[i].name),
                 "list it under `dispatches:`, or move it to a spec of its own");
  }
  for (const auto& b : k_.buffers) {
    if (has_errors()) break;  // a dispatch in error writes nothing
    if (b.is_output() && !b.intermediate && !written.count(b.name)) {
      diags_.error(ErrorKind::bad_value, b.loc, fmt::format("no dispatch writes the family's output `{}`", b.name),
                   "bind it to an output of one of the kernels under `dispatches:`");
    }
  }
  k_.family = std::move(family);
}

namespace {

// The binding of `member` in `list`, or nullptr.
ir::FamilyBinding* find_binding(std::vector<ir::FamilyBinding>& list, const std::string& member) {
  auto it = std::find_if(list.begin(), list.end(), [&](const ir::FamilyBinding& b) { return b.member == member; });
  return it == list.end() ? nullptr : &*it;
}

template <typename List>
bool has_name(const List& list, const std::string& name) {
  return std::any_of(list.begin(), list.end(), [&](const auto& x) { return x.name == name; });
}

template <typename List>
std::vector<std::string> names_of(const List& list) {
  std::vector<std::string> out;
  for (const auto& x : list) out.push_back(x.name);
  return out;
}

}  // namespace

// Gives every dim, buffer, scalar and type parameter of the member a family name or expression
// (by name where the dispatch does not write one), in the member's order.
void Validator::bind_dispatch(ir::FamilyDispatch& d, const ir::Kernel& m) {
  auto unknown = [&](const SourceLoc& loc, const std::string& name, const char* what, const std::vector<std::string>& names) {
    std::string s = support::did_you_mean(name, names);
    diags_.error(ErrorKind::undefined_symbol, loc.line ? loc : d.loc, fmt::format("kernel `{}` has no {} `{}`", m.name, what, name),
                 s.empty() ? fmt::format("its {}s are: {}", what, fmt::join(names, ", ")) : fmt::format("did you mean `{}`?", s));
  };
  std::vector<ir::FamilyDimBinding> dims;
  for (const auto& b : d.dims) {
    if (!has_name(m.dims, b.member)) unknown(b.member_loc, b.member, "dim", names_of(m.dims));
    check_symbols(b.value, Scope::dims | Scope::types, "a dispatch's dim value");
  }
  for (const auto& md : m.dims) {
    auto it = std::find_if(d.dims.begin(), d.dims.end(), [&](const auto& b) { return b.member == md.name; });
    if (it != d.dims.end()) {
      dims.push_back(*it);
    } else if (has_name(k_.dims, md.name)) {
      dims.push_back({md.name, expr::Expr::leaf(expr::Expr::Kind::symbol, d.loc, 0, md.name), false, d.loc});
    } else {
      diags_.error(ErrorKind::missing_field, d.loc, fmt::format("dispatch of `{}` gives no value to its dim `{}`", m.name, md.name),
                   fmt::format("the family has no dim `{}`: add `dims: {{{}: <expression of the family's dims>}}`",
                               md.name, md.name));
    }
  }
  d.dims = std::move(dims);
  struct Kind {
    std::vector<ir::FamilyBinding>* list;
    std::vector<std::string> member_names, family_names;
    const char* what;
  };
  std::vector<std::string> family_types = names_of(k_.type_params);
  Kind kinds[] = {{&d.buffers, names_of(m.buffers), names_of(k_.buffers), "buffer"},
                  {&d.scalars, names_of(m.scalars), names_of(k_.scalars), "scalar"},
                  {&d.types, names_of(m.type_params), family_types, "type parameter"}};
  for (auto& kind : kinds) {
    std::vector<ir::FamilyBinding> bound;
    for (auto& b : *kind.list) {
      if (std::find(kind.member_names.begin(), kind.member_names.end(), b.member) == kind.member_names.end()) {
        unknown(b.member_loc, b.member, kind.what, kind.member_names);
        continue;
      }
      bool known = std::find(kind.family_names.begin(), kind.family_names.end(), b.family) != kind.family_names.end();
      bool concrete_type = kind.list == &d.types && ir::scalar_type_from_spec(b.family);
      if (!known && !concrete_type) {
        std::string s = support::did_you_mean(b.family, kind.family_names);
        diags_.error(ErrorKind::undefined_symbol, b.loc, fmt::format("the family has no {} `{}`", kind.what, b.family),
                     s.empty() ? fmt::format("bind `{}` to one of: {}", b.member, fmt::join(kind.family_names, ", "))
                               : fmt::format("did you mean `{}`?", s));
      }
    }
    for (const auto& name : kind.member_names) {
      if (auto* b = find_binding(*kind.list, name)) {
        bound.push_back(*b);
      } else if (std::find(kind.family_names.begin(), kind.family_names.end(), name) != kind.family_names.end()) {
        bound.push_back({name, name, d.loc});
      } else {
        diags_.error(ErrorKind::missing_field, d.loc, fmt::format("dispatch of `{}` binds nothing to its {} `{}`", m.name, kind.what, name),
                     fmt::format("the family has no {} `{}`: add `{}s: {{{}: <the family's name>}}`", kind.what, name,
                                 kind.list == &d.types ? "type" : kind.what, name));
      }
    }
    *kind.list = std::move(bound);
  }
}

// At every variant of the family, the member has a variant of the types bound to it.
void Validator::check_dispatch_types(const ir::FamilyDispatch& d, const ir::Kernel& m) {
  for (const auto& v : k_.variants) {
    auto types = k_.family->member_types(d, v);
    bool found = std::any_of(m.variants.begin(), m.variants.end(), [&](const ir::Variant& mv) { return mv.types == types; });
    if (found) continue;
    std::vector<std::string> parts;
    for (const auto& [name, t] : types) parts.push_back(fmt::format("{}: {}", name, ir::info(t).spec_name));
    diags_.error(ErrorKind::bad_value, d.loc,
                 fmt::format("kernel `{}` has no variant for {{{}}}, which the family's variant `{}` needs", m.name,
                             fmt::join(parts, ", "), v.entry_point),
                 "list those types in the kernel's `types:`, or bind its type parameters differently under `types:`");
    return;
  }
}

// Element types agree at every variant; inputs are never written; intermediates are written
// before they are read.
void Validator::check_dispatch_buffers(const ir::FamilyDispatch& d, const ir::Kernel& m, std::set<std::string>& written) {
  std::set<std::string> writes;
  for (const auto& mb : m.buffers) {
    const std::string& name = ir::Family::bound(d.buffers, mb.name);
    const auto& fb = *std::find_if(k_.buffers.begin(), k_.buffers.end(), [&](const ir::Buffer& b) { return b.name == name; });
    for (const auto& v : k_.variants) {
      ir::ScalarType member = mb.type.resolve(k_.family->member_types(d, v));
      ir::ScalarType family = fb.type.resolve(v.types);
      if (member == family) continue;
      diags_.error(ErrorKind::bad_value, d.loc,
                   fmt::format("kernel `{}` sees buffer `{}` as {} where the family's `{}` is {} (at {})", m.name, mb.name,
                               ir::info(member).spec_name, name, ir::info(family).spec_name, v.entry_point),
                   "bind buffers of the same element type");
      break;
    }
    if (mb.is_output() && fb.access == ir::Access::read) {
      diags_.error(ErrorKind::bad_value, d.loc, fmt::format("kernel `{}` writes the family's input `{}`", m.name, name),
                   "the caller's inputs stay as they were: declare it `access: read_write`, or write an intermediate");
    }
    if (mb.access != ir::Access::write && fb.intermediate && !written.count(name)) {
      diags_.error(ErrorKind::bad_value, d.loc,
                   fmt::format("kernel `{}` reads the intermediate `{}` before any dispatch wrote it", m.name, name),
                   "an intermediate holds only what earlier dispatches wrote: dispatch its writer first");
    }
    if (mb.is_output()) writes.insert(name);
  }
  written.insert(writes.begin(), writes.end());
}

// Each dispatch's dims, computed from the case's, are valid for its kernel.
void Validator::check_family_case(const ir::TestCase& c, const std::map<std::string, int64_t>& dims) {
  for (const auto& d : k_.family->dispatches) {
    const ir::Kernel& m = k_.family->kernel_of(d);
    try {
      auto member_dims = k_.family->member_dims(d, dims, k_.variants.front());
      std::string problem = m.dims_violation(member_dims);
      if (problem.empty()) continue;
      diags_.error(ErrorKind::test_case, c.loc, fmt::format("test case `{}`: dispatch of `{}`: {}", c.name, m.name, problem),
                   "fix the dims, or the dispatch's `dims:` that computes them");
    } catch (const expr::EvalError& e) {
      diags_.error(ErrorKind::test_case, c.loc, fmt::format("test case `{}`: dispatch of `{}`: {}", c.name, m.name, e.message),
                   "fix the dims, or the dispatch's `dims:` that computes them");
    }
  }
}

// Every variant that runs the case must be able to size its buffers and grid and count its cost:
// a shape that divides by zero, or whose byte size overflows (and would wrap to a small
// allocation), is a spec error here rather than a crash or a silent wrap in generated code.
void Validator::check_case_sizes(const ir::TestCase& c, const std::map<std::string, int64_t>& dims) {
  for (const auto& v : k_.variants) {
    try {
      if (!k_.variant_violation(dims, v).empty()) continue;  // skipped there
    } catch (const expr::EvalError&) {
      continue;  // check_case_runs_somewhere reported it
    }
    const expr::Env env = ir::Kernel::env_for(dims, v);
    auto fail = [&](const expr::Expr& e, const std::string& what) {
      diags_.error(ErrorKind::test_case, e.loc,
                   fmt::format("test case `{}`: {} at {}", c.name, what, k_.describe_tuning(v)),
                   "every size must be computable in 64 bits for every test case: fix the expression or the dims");
    };
    for (const auto& b : k_.buffers) {
      if (auto problem = byte_size_problem(b.shape, ir::info(b.type.resolve(v.types)).size, env)) {
        return fail(problem->first, fmt::format("buffer `{}`: {}", b.name, problem->second));
      }
    }
    for (const auto* list : {&k_.dispatch.threadgroups}) {
      if (auto problem = byte_size_problem(*list, 1, env)) return fail(problem->first, "threadgroups: " + problem->second);
    }
    if (k_.dispatch.threads_from_dims) {
      if (auto problem = threads_problem(v, env)) {
        diags_.error(ErrorKind::test_case, problem->first.loc,
                     fmt::format("test case `{}`: {} at {}", c.name, problem->second, k_.describe_tuning(v)),
                     "the size each problem gets must lie in 1 .. max_threads_per_threadgroup: fix the expression, "
                     "raise the maximum, or exclude these dims with a precondition");
        return;
      }
    }
    for (const auto* cost : k_.cost.formulas()) {
      try {
        expr::evaluate(*cost, env);
      } catch (const expr::EvalError& e) {
        return fail(*cost, "cost: " + e.message);
      }
    }
  }
}

// Why a threadgroup size computed from a case's dims cannot run at `v`: an axis below 1 or a
// total above the declared maximum.
std::optional<std::pair<expr::Expr, std::string>> Validator::threads_problem(const ir::Variant& v, const expr::Env& env) {
  int64_t total = 1;
  for (const auto& e : k_.dispatch.threads_per_threadgroup) {
    int64_t n = 0;
    try {
      n = expr::evaluate(e, env);
    } catch (const expr::EvalError& err) {
      return std::pair{e, "threads_per_threadgroup: " + err.message};
    }
    if (n < 1) return std::pair{e, fmt::format("threads_per_threadgroup: `{}` is {}", expr::to_source(e), n)};
    total = std::min<int64_t>(total * n, INT64_MAX / 2048);
  }
  if (total > v.threads_per_threadgroup) {
    return std::pair{k_.dispatch.threads_per_threadgroup[0],
                     fmt::format("{} threads per threadgroup, above max_threads_per_threadgroup {}", total,
                                 v.threads_per_threadgroup)};
  }
  return std::nullopt;
}

// Why the product of `axes` times `element_size` cannot be computed (the axis at fault and the
// reason), or nullopt when it can.
std::optional<std::pair<expr::Expr, std::string>> Validator::byte_size_problem(const std::vector<expr::Expr>& axes,
                                                                              int64_t element_size,
                                                                              const expr::Env& env) {
  int64_t total = element_size;
  for (const auto& e : axes) {
    int64_t n = 0;
    try {
      n = expr::evaluate(e, env);
    } catch (const expr::EvalError& err) {
      return std::pair{e, err.message};
    }
    if (n < 0) return std::pair{e, fmt::format("`{}` is {}", expr::to_source(e), n)};
    if (__builtin_mul_overflow(total, n, &total)) {
      return std::pair{e, fmt::format("the size overflows 64 bits at `{}` = {}", expr::to_source(e), n)};
    }
  }
  return std::nullopt;
}

// A case that violates a per-variant precondition is skipped on that variant; one that no variant
// can run verifies nothing, so it is a spec error.
void Validator::check_case_runs_somewhere(const ir::TestCase& c, const std::map<std::string, int64_t>& dims) {
  std::string violated;
  bool runs = false;
  for (const auto& v : k_.variants) {  // all of them: verify evaluates the checks at every variant
    try {
      std::string message = k_.variant_violation(dims, v);
      runs = runs || message.empty();
      if (violated.empty()) violated = message;
    } catch (const expr::EvalError& e) {
      diags_.error(ErrorKind::test_case, c.loc,
                   fmt::format("test case `{}`: {} at {}", c.name, e.message, k_.describe_tuning(v)), "fix the dims");
      return;
    }
  }
  if (runs) return;
  diags_.error(ErrorKind::test_case, c.loc,
               fmt::format("test case `{}`: no variant can run it: violates precondition: {}", c.name, violated),
               "every variant would skip it; fix the dims or widen the tune space");
}

}  // namespace

bool validate_kernel(ir::Kernel& kernel, Diagnostics& diags, VariantBinder bind_variants) {
  int before = diags.error_count();
  Validator(kernel, diags, std::move(bind_variants)).run();
  return diags.error_count() == before;
}

}  // namespace mtlgen::spec
