#pragma once
// What the runs of one case (kRuns: lane orders, output poisons, zeroed threadgroup memory) tell
// about one output: elements no thread wrote, and elements whose value depends on the run. Shared
// by single-kernel and kernel-family cases, which word their reports themselves.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/types.h"

namespace mtlgen::verify {

// One output's bytes after each run, in kRuns order.
struct OutputRuns {
  std::string name;
  ir::ScalarType type = ir::ScalarType::f32;
  std::vector<int64_t> shape;
  size_t elements = 0;
  bool starts_poisoned = false;  // filled with each run's output poison before it (access: write)
  const std::vector<std::vector<uint8_t>>* snapshots = nullptr;
};

// A count of elements and the first few of them, described.
struct ElementFinding {
  size_t count = 0;
  std::vector<std::string> examples;
};

// Elements that still hold the output poison of both poisoned runs: never written.
ElementFinding unwritten_elements(const OutputRuns& o);

// Per element: whether some thread wrote it (it does not hold both poisoned runs' poison).
std::vector<bool> written_elements(const OutputRuns& o);

// Elements (other than never-written ones) whose bytes after run `run` differ from the baseline's.
ElementFinding run_difference(const OutputRuns& o, size_t run);

// Whether element `i` of a `type` buffer is a NaN (of either sign: one outcome, see below).
bool is_nan_element(ir::ScalarType type, const uint8_t* data, size_t i);

// Whether element `i` of two snapshots of a `type` buffer holds the same outcome: the same bytes, or
// NaN in both (g++ may give a NaN either sign in two builds of one kernel: race-instrumented and
// plain, pattern- and zero-filled; Metal does not specify it either).
bool same_outcome(ir::ScalarType type, const uint8_t* a, const uint8_t* b, size_t i);

}  // namespace mtlgen::verify
