#include "spec/spec_validator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "spec/binding_table.h"
#include "spec/body_threadgroup.h"
#include "spec/case_checks.h"
#include "spec/fill_checks.h"
#include "spec/name_assigner.h"
#include "spec/names.h"
#include "spec/variants.h"
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
    build_variants(k_, diags_);
    if (bind_variants_) bind_variants_(k_);
    if (has_errors()) return;
    build_binding_table(k_);
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
    if (std::none_of(k_.buffers.begin(), k_.buffers.end(), [](const ir::Buffer& b) { return b.is_host_output(); })) {
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

  // ---- body ----
  void scan_body() {
    auto tokens = support::identifier_tokens(k_.body.text);
    for (size_t i = 0; i < tokens.size(); ++i) scan_token(tokens, i);
    // Functions of the Metal preludes may call helpers too; they see no dims or builtins.
    for (const ir::CodeBlock* block : {&k_.prelude, &k_.metal_prelude}) {
      for (const auto& t : support::identifier_tokens(block->text)) note_helper(t.text);
    }
    for (auto h : std::set<ir::Helper>(k_.helpers_used)) add_helper(h);
    read_body_threadgroup_variables(k_, diags_);
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

  static size_t offset_of(const std::string& text, const support::Token& t) {
    size_t pos = 0;
    for (int line = 1; line < t.line; ++line) pos = text.find('\n', pos) + 1;
    return pos + t.column - 1;
  }

  // ---- kernel families ----
  void validate_members();
  void check_family_dispatches();
  void bind_dispatch(ir::FamilyDispatch& d, const ir::Kernel& m);
  void check_dispatch_types(const ir::FamilyDispatch& d, const ir::Kernel& m);
  void check_dispatch_buffers(const ir::FamilyDispatch& d, const ir::Kernel& m, std::set<std::string>& written);

  // ---- tests ----
  void check_tests();
  void check_case(const ir::TestCase& c);

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
  check_fills(k_, diags_);
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
                             [&](const ir::Buffer& b) { return b.name == name && b.is_host_input(); });
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
  check_case_at_variants(k_, c, env.symbols, diags_);
}

// ---- kernel families ----

void Validator::validate_members() {
  auto family = std::make_shared<ir::Family>(*k_.family);
  for (size_t i = 0; i < family->kernels.size(); ++i) {
    ir::Kernel& m = family->kernels[i];
    if (m.name == k_.name) {
      diags_.error(ErrorKind::duplicate_name, m.name_loc, fmt::format("kernel `{}` has the family's name", m.name),
                   "the family's files and each kernel's share one output directory: rename one");
    }
    if (m.is_source()) {
      diags_.error(ErrorKind::unknown_key, m.name_loc, fmt::format("kernel `{}` is hand-written (`source:`)", m.name),
                   "family members have a `body:`; hand-written kernels cannot join a family yet");
      continue;
    }
    if (!family->borrowed(i)) validate_kernel(m, diags_);  // a borrowed one was, in its own spec
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
    if (b.is_host_output() && !written.count(b.name)) {
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
        bound.push_back({name, name, d.loc, d.loc});  // bound by name at the dispatch
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

}  // namespace

bool validate_kernel(ir::Kernel& kernel, Diagnostics& diags, VariantBinder bind_variants) {
  int before = diags.error_count();
  Validator(kernel, diags, std::move(bind_variants)).run();
  return diags.error_count() == before;
}

}  // namespace mtlgen::spec
