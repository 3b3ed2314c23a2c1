#pragma once
// The one name assigner: every name a generated file derives from a spec's names (Objective-C
// classes, selector pieces and parameters, properties, C++ facade names, file names, a family's
// dispatch locals) is computed here, once, in the front end, so that a collision is reported at
// the spec's line instead of breaking a build on the Mac. Emitters read ir::Kernel::names.
// It lives in the front end (not in ir) because it reports diagnostics and uses the reserved
// lists of spec/names.h; the IR only carries the result (ir/names.h).
#include <string>
#include <string_view>
#include <vector>

#include "ir/kernel.h"
#include "support/diagnostics.h"

namespace mtlgen::spec {

// rms_norm -> RmsNorm. Words split at `_` get a capital first letter; the `_` between two digits
// stays (q8_0 -> Q8_0, not Q80); leading and trailing `_` stay (error_ -> Error_).
std::string upper_camel(std::string_view spec_name);
// rms_norm -> rmsNorm, q8_0 -> q8_0, X -> x: upper_camel with its first letter in lower case.
std::string lower_camel(std::string_view spec_name);

// Assigns `kernel.names` (a family's members must have theirs) and reports, at the spec's line,
// every derived name that collides with another or with a reserved one. Returns false when it
// reported an error.
bool assign_names(ir::Kernel& kernel, support::Diagnostics& diags);

// The rules across a library of kernels (several specs): two kernels whose classes, typedefs,
// MTGKernelLibrary properties, entry points or directories collide (directories compared
// ignoring case, as macOS file systems do), or a kernel named after the library's own files.
// Reported at the later kernel's name, naming the earlier one.
void check_library_names(const std::vector<ir::Kernel>& kernels, support::Diagnostics& diags);

}  // namespace mtlgen::spec
