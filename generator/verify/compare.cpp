#include "verify/compare.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "verify/elements.h"

namespace mtlgen::verify {

ir::Tolerance tolerance_for(const ir::Kernel& kernel, const std::string& output, ir::ScalarType type) {
  if (const ir::Tolerance* t = kernel.output_tolerance(output)) return *t;
  const ir::TestPlan& plan = kernel.tests;
  if (auto it = plan.tolerances.find(type); it != plan.tolerances.end()) return it->second;
  ir::Tolerance t;
  switch (type) {
    case ir::ScalarType::f32: t.max_abs = 1e-6; break;
    case ir::ScalarType::f16: t.max_abs = 1e-3; break;
    case ir::ScalarType::bf16: t.max_abs = 1e-2; break;
    default: t.exact = true;
  }
  return t;
}

std::string element_name(const std::string& buffer, const std::vector<int64_t>& shape, size_t flat) {
  std::vector<int64_t> index(shape.size());
  for (size_t axis = shape.size(); axis-- > 0;) {
    int64_t extent = shape[axis] > 0 ? shape[axis] : 1;
    index[axis] = static_cast<int64_t>(flat) % extent;
    flat /= static_cast<size_t>(extent);
  }
  return fmt::format("{}[{}]", buffer, fmt::join(index, ", "));
}

namespace {

bool element_ok(double got, double want, const ir::Tolerance& tol) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want);
  if (std::isinf(got) || std::isinf(want) || tol.exact) return got == want;
  if (!tol.max_abs && !tol.max_rel) return true;  // judged by nmse alone
  double diff = std::fabs(got - want);
  return (tol.max_abs && diff <= *tol.max_abs) || (tol.max_rel && diff <= *tol.max_rel * std::fabs(want));
}

std::string value_text(double v) { return fmt::format("{:.9g}", v); }

}  // namespace

OutputStats compare_output(const std::string& buffer, ir::ScalarType type, const std::vector<int64_t>& shape,
                           const void* simulated, const void* expected, size_t elements, const ir::Tolerance& tol) {
  OutputStats s;
  s.buffer = buffer;
  s.elements = elements;
  double err2 = 0, ref2 = 0;
  for (size_t i = 0; i < elements; ++i) {
    double got = load_element(type, simulated, i), want = load_element(type, expected, i);
    if (std::isfinite(got) && std::isfinite(want)) {
      double diff = std::fabs(got - want);
      s.max_abs = std::max(s.max_abs, diff);
      if (want != 0) s.max_rel = std::max(s.max_rel, diff / std::fabs(want));
      err2 += diff * diff;
      ref2 += want * want;
    }
    if (!element_ok(got, want, tol)) {
      // max-abs, max-rel and NMSE cover finite pairs only; these are counted apart so that a
      // report never reads "max abs 0" for an output full of NaN.
      if (!std::isfinite(got) || !std::isfinite(want)) ++s.nonfinite_mismatches;
      if (s.mismatches++ < 5) {
        s.examples.push_back(fmt::format("{} = {}, expected {}", element_name(buffer, shape, i), value_text(got), value_text(want)));
        s.example_elements.push_back(i);
      }
    }
  }
  s.nmse = ref2 > 0 ? err2 / ref2 : err2;
  s.nmse_failed = tol.nmse && s.nmse > *tol.nmse;
  return s;
}

}  // namespace mtlgen::verify
