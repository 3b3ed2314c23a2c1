#include "verify/run_checks.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "verify/compare.h"
#include "verify/dispatch_setup.h"
#include "verify/elements.h"

namespace mtlgen::verify {

namespace {

bool is_unwritten(const OutputRuns& o, size_t i) {
  const size_t size = static_cast<size_t>(ir::info(o.type).size);
  const auto& runs = *o.snapshots;
  return o.starts_poisoned && equals_pattern(runs[0].data() + i * size, output_poison(o.type, 0)) &&
         equals_pattern(runs[1].data() + i * size, output_poison(o.type, 1));
}

}  // namespace

ElementFinding unwritten_elements(const OutputRuns& o) {
  ElementFinding f;
  for (size_t i = 0; i < o.elements; ++i) {
    if (!is_unwritten(o, i)) continue;
    if (f.count++ < 5) f.examples.push_back(element_name(o.name, o.shape, i));
  }
  return f;
}

std::vector<bool> written_elements(const OutputRuns& o) {
  std::vector<bool> written(o.elements);
  for (size_t i = 0; i < o.elements; ++i) written[i] = !is_unwritten(o, i);
  return written;
}

bool is_nan_element(ir::ScalarType type, const uint8_t* data, size_t i) {
  return ir::info(type).is_float && std::isnan(load_element(type, data, i));
}

bool same_outcome(ir::ScalarType type, const uint8_t* a, const uint8_t* b, size_t i) {
  const size_t size = static_cast<size_t>(ir::info(type).size);
  if (std::memcmp(a + i * size, b + i * size, size) == 0) return true;
  return is_nan_element(type, a, i) && is_nan_element(type, b, i);
}

ElementFinding run_difference(const OutputRuns& o, size_t run) {
  const auto& runs = *o.snapshots;
  ElementFinding f;
  for (size_t i = 0; i < o.elements; ++i) {
    if (same_outcome(o.type, runs[0].data(), runs[run].data(), i) || is_unwritten(o, i)) continue;
    if (f.count++ < 3) {
      f.examples.push_back(fmt::format("{} = {:.9g} ({}) but {:.9g} ({})", element_name(o.name, o.shape, i),
                                       load_element(o.type, runs[0].data(), i), kRuns[0].label,
                                       load_element(o.type, runs[run].data(), i), kRuns[run].label));
    }
  }
  return f;
}

}  // namespace mtlgen::verify
