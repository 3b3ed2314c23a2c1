#pragma once
// A spec body is Metal only once the generator has wrapped it in a kernel: this stage runs the
// MSL front end (libclang, with the Metal conformance checks) over the emitted .metal of a
// spec-body kernel and reports each error once, at the spec's body line, instead of per variant
// from a generated file when the simulator compiles it.
#include <filesystem>
#include <string>
#include <vector>

#include "ir/kernel.h"
#include "support/diagnostics.h"

namespace mtlgen::check_msl {

// Returns false when the emitted MSL has errors (reported in `diags` at spec lines).
// Hand-written kernels (`source:`) are checked where their file is read; this accepts them.
bool check_emitted_msl(const ir::Kernel& kernel, support::Diagnostics& diags);

// The same for the reference: the emitted C++ reference (with its types header and the support
// headers, in memory) through libclang, errors at the spec's reference lines.
bool check_emitted_reference(const ir::Kernel& kernel, support::Diagnostics& diags);

// The kernels of a loaded library (spec::load_library) whose emitted MSL and reference compile;
// the others are reported and left out. A family is left out with its kernels when one of them,
// or its reference, fails.
//
// With `passed`: a kernel whose emitted code passed before (a marker under <dir>/checked/, keyed by
// that code, libclang's version and `salt`, the caller's build identity) is not parsed again.
// Only passes are kept, so every error is reported on every run.
struct PassedChecks {
  std::filesystem::path dir;
  std::string salt;
};
std::vector<ir::Kernel> kernels_that_compile(std::vector<ir::Kernel> kernels, support::Diagnostics& diags,
                                             const PassedChecks& passed = {});

}  // namespace mtlgen::check_msl
