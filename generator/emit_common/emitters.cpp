// The emitter registry: adding a backend is one file plus one line here.
#include <algorithm>
#include <iterator>

#include "emit_common/emitter.h"
#include "emit_manifest/manifest_emitter.h"
#include "emit_msl/msl_emitter.h"
#include "emit_objc/harness_emitter.h"
#include "emit_objc/objc_emitter.h"
#include "emit_reference/reference_emitter.h"

namespace mtlgen::emit {

const std::vector<Emitter>& all_emitters() {
  static const std::vector<Emitter> emitters = {
      {"msl", "Metal kernel source, one entry point per variant", emit_msl, nullptr},
      {"types", "host-side kernel description shared by reference, glue and simulator", emit_types, emit_host_support,
       true, true},
      {"reference", "serial C++ reference implementation", emit_reference, nullptr, true, true},
      {"objc", "Objective-C++ pipelines and typed encode calls, with a plain C++ facade", emit_objc, emit_objc_support,
       false, true},
      {"harness", "Objective-C++ timing and autotune programs, and the CMake build for macOS", emit_harness,
       emit_harness_support, false, true},
      {"manifest", "manifest.json describing every kernel, variant and generated file", emit_manifest_kernel, emit_manifest,
       false, true},
  };
  return emitters;
}

support::OutputSet generate_all(const std::vector<ir::Kernel>& kernels) {
  support::OutputSet out;
  for (const auto& e : all_emitters()) {
    std::vector<ir::Kernel> mine;
    std::copy_if(kernels.begin(), kernels.end(), std::back_inserter(mine), [&](const ir::Kernel& k) {
      return (e.hand_written_kernels || !k.is_source()) && (e.families || !k.is_family());
    });
    for (const auto& k : mine) e.emit_kernel(k, out);
    if (e.emit_library) e.emit_library(mine, out);
  }
  return out;
}

}  // namespace mtlgen::emit
