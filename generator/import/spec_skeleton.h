#pragma once
// `mtlgen import`: from a parsed .metal file (the MSL front end's Unit) to spec skeletons, one per
// kernel function, whose instantiations become the spec's `entries:`. A skeleton states only what
// the source cannot (shapes, dims, test cases, dispatch, the reference) and marks each of those
// values `TODO: ...`; the spec front end reports every TODO left (spec/placeholders.h).
#include <filesystem>
#include <string>
#include <vector>

#include "msl/msl_unit.h"
#include "support/diagnostics.h"

namespace mtlgen::import {

struct SkeletonOptions {
  std::filesystem::path source;      // the .metal file; `source:` is written relative to output_dir
  std::filesystem::path output_dir;  // where the skeletons will live
  std::string source_display;        // how the banner names the source ('/'-separated)
  std::string entry;                 // only the kernel of this host name ("" = every kernel)
};

struct Skeleton {
  std::string file_name;  // `<name>.yaml`
  std::string text;
  int placeholders = 0;   // TODO values in `text`
};

// Reports an unknown `options.entry` (with the host names there are) and returns nothing then.
std::vector<Skeleton> spec_skeletons(const msl::Unit& unit, const SkeletonOptions& options,
                                     support::Diagnostics& diags);

}  // namespace mtlgen::import
