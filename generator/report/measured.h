#pragma once
// Measured times a user brings back to `mtlgen report --measured FILE`, plotted beside the
// predictions. Two sources: the tuning file `autotune_<kernel>` writes on a Mac
// ({"format": "mtlgen-tuning-1", "devices": {device: {kernel: {types: {entry_point, median_us,
// dims, ...}}}}}, docs/host-glue.md; `bench_<kernel>` prints a table and writes no file), and
// `mtlgen bench --gpu cuda --json` ({"gpu", "results": [{kernel, case, dims, entry_point,
// median_us | error, members (a family: [{dispatch, kernel, median_us}])}]}, docs/gpu.md).
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/kernel.h"

namespace mtlgen::report {

// One dispatch of a family's measured run (bench times each between CUDA events).
struct MeasuredMember {
  int64_t dispatch = 0;  // 1-based
  std::string kernel;
  double median_us = 0;
};

struct MeasuredPoint {
  std::string entry_point;
  double median_us = 0;
  std::vector<MeasuredMember> members;  // a family's run split by dispatch, in order; else empty
};

// One device's times of one kernel at one problem size, from one file.
struct MeasuredSet {
  std::string file;
  std::string kernel;
  std::string label;      // "measured: Apple M3 Max" or "measured: NVIDIA H200 (CUDA, relative guide only)"
  std::string case_name;  // the spec test case (CUDA bench); "" when the file gives only dims
  nlohmann::json dims;
  std::vector<MeasuredPoint> points;
};

// A file that is not JSON or not in either format; what() is the message after "FILE: error: ".
struct MeasuredError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Every set in `doc` (the contents of `file`); throws MeasuredError.
std::vector<MeasuredSet> parse_measured(const nlohmann::json& doc, const std::string& file);
// Reads and parses `file`; throws MeasuredError.
std::vector<MeasuredSet> read_measured(const std::filesystem::path& file);

// Drops the entries naming a kernel or entry point the library lacks, each with a warning line
// "FILE: warning: ..." in `warnings`, and the sets left empty; drops, with a warning, a family
// point's members that are not the family's dispatches in order.
std::vector<MeasuredSet> match_library(std::vector<MeasuredSet> sets, const std::vector<ir::Kernel>& kernels,
                                       std::vector<std::string>& warnings);

// One set as report.json holds it under its kernel's `measured`.
nlohmann::json to_json(const MeasuredSet& set);

}  // namespace mtlgen::report
