#include "verify/compare.h"

#include <fmt/format.h>

#include "mtlgen_testdata.h"
#include "verify/inputs.h"

namespace mtlgen::verify {

namespace td = mtlgen::testdata;

namespace {

td::Tolerance to_testdata(const ir::Tolerance& t) { return {t.max_abs, t.max_rel, t.nmse, t.exact, t.peak_rel}; }

ir::Tolerance from_testdata(const td::Tolerance& t) { return {t.max_abs, t.max_rel, t.nmse, t.exact, t.peak_rel}; }

std::string value_text(double v) { return fmt::format("{:.9g}", v); }

}  // namespace

ir::Tolerance tolerance_for(const ir::Kernel& kernel, const std::string& output, ir::ScalarType type) {
  if (const ir::Tolerance* t = kernel.output_tolerance(output)) return *t;
  const ir::TestPlan& plan = kernel.tests;
  if (auto it = plan.tolerances.find(type); it != plan.tolerances.end()) return it->second;
  return from_testdata(td::default_tolerance(dtype_of(type)));
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

OutputStats compare_output(const std::string& buffer, ir::ScalarType type, const std::vector<int64_t>& shape,
                           const void* simulated, const void* expected, size_t elements, const ir::Tolerance& tol) {
  const DType dtype = dtype_of(type);
  const td::Judgement j = td::judge(dtype, simulated, expected, elements, to_testdata(tol));
  OutputStats s;
  s.buffer = buffer;
  s.elements = elements;
  s.max_abs = j.max_abs;
  s.max_rel = j.max_rel;
  s.nmse = j.nmse;
  s.nmse_failed = j.nmse_failed;
  s.mismatches = j.mismatches;
  s.nonfinite_mismatches = j.nonfinite_mismatches;
  for (uint64_t i : j.first_mismatches) {
    s.examples.push_back(fmt::format("{} = {}, expected {}", element_name(buffer, shape, i),
                                     value_text(td::load_value(dtype, simulated, i)),
                                     value_text(td::load_value(dtype, expected, i))));
    s.example_elements.push_back(i);
  }
  return s;
}

}  // namespace mtlgen::verify
