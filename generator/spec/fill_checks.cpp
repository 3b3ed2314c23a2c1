#include "spec/fill_checks.h"

#include <fmt/format.h>

#include <cmath>

namespace mtlgen::spec {

using support::Diagnostics;
using support::ErrorKind;
using support::SourceLoc;

namespace {

class FillChecker {
 public:
  FillChecker(const ir::Kernel& k, Diagnostics& d) : k_(k), diags_(d) {}

  // A fill must produce values its integer element type holds: clamping `uniform -128..127` into a
  // uint8 would test something else than the spec says. (A float type rounds what it cannot hold
  // to ±inf, as the GPU's conversion does: `1e6` in a half is a way to write inf.)
  void run() {
    const ir::TestCase no_fills;
    for (const auto& b : k_.buffers) {
      if (!b.is_host_input()) continue;  // never filled
      bool default_used = false;
      for (const auto& c : k_.tests.cases) {
        if (!c.inputs.count(b.name)) default_used = true;
        else check_buffer_fill(b, k_.input_fill(c, b.name), c.inputs.at(b.name).loc);
      }
      if (default_used) check_buffer_fill(b, k_.input_fill(no_fills, b.name), k_.tests.default_fill.loc);
    }
  }

 private:
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

  // The element types a buffer may have: its own, or each its type parameter lists.
  std::vector<ir::ScalarType> types_of(const ir::TypeRef& t) const {
    if (t.concrete) return {*t.concrete};
    for (const auto& p : k_.type_params) if (p.name == t.param) return p.types;
    return {};
  }

  const ir::Kernel& k_;
  Diagnostics& diags_;
};

}  // namespace

void check_fills(const ir::Kernel& kernel, Diagnostics& diags) { FillChecker(kernel, diags).run(); }

}  // namespace mtlgen::spec
