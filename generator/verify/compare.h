#pragma once
// Simulator output against reference output, element by element, under the spec's tolerance.
#include <cstddef>
#include <string>
#include <vector>

#include "ir/kernel.h"

namespace mtlgen::verify {

struct OutputStats {
  std::string buffer;
  size_t elements = 0;
  double max_abs = 0;
  double max_rel = 0;
  double nmse = 0;
  size_t mismatches = 0;
  size_t nonfinite_mismatches = 0;    // mismatches with NaN or an infinity on either side (not in the stats above)
  std::vector<std::string> examples;  // the first few mismatches, "out[1, 3] = 0.5, expected 0.25"
  std::vector<size_t> example_elements;  // their flat indices
  bool nmse_failed = false;
};

// The tolerance for an output: the spec's for that buffer, else for its element type, else
// DESIGN's defaults (f32 1e-6, f16 1e-3, bf16 1e-2 max-abs; integers exact).
ir::Tolerance tolerance_for(const ir::Kernel& kernel, const std::string& output, ir::ScalarType type);

// "out[1, 4096]" for a flat index into a buffer of `shape`.
std::string element_name(const std::string& buffer, const std::vector<int64_t>& shape, size_t flat);

OutputStats compare_output(const std::string& buffer, ir::ScalarType type, const std::vector<int64_t>& shape,
                           const void* simulated, const void* expected, size_t elements, const ir::Tolerance& tol);

}  // namespace mtlgen::verify
