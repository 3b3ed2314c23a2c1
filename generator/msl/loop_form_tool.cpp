// mtlgen_loop_form IN.metal OUT: writes the loop form the MSL front end makes of IN's kernels
// (msl::Unit::loop_form, docs/simulator.md) to OUT, for tests and benchmarks to include after IN's simulator
// copy; says on stderr which kernels have none and why.
#include <fstream>
#include <iostream>

#include "msl/msl_unit.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: mtlgen_loop_form IN.metal OUT\n";
    return 2;
  }
  mtlgen::msl::ParseOptions options;
  options.file = argv[1];
  options.conformance = false;
  mtlgen::support::Diagnostics diags;
  mtlgen::msl::Unit unit = mtlgen::msl::parse(options, diags);
  if (diags.error_count() != 0) {
    std::cerr << diags.format_all();
    return 1;
  }
  for (const auto& k : unit.loop_form().kernels)
    if (!k.refusal.empty()) std::cerr << argv[1] << ": `" << k.function << "` has no loop form: " << k.refusal << "\n";
  std::ofstream(argv[2]) << unit.loop_form().text();
  return 0;
}
