#pragma once
// The manifest stage: one manifest.json for the whole library, describing every kernel as the
// validated IR sees it (dims, constraints, buffers, binding table, dispatch, variants, cost) and
// the files generated for it, for tools that drive the kernels without parsing C++ or YAML; and
// every kernel family: its buffers (intermediates with their shapes), its kernels in dispatch
// order and each dispatch's bindings to the family's dims, buffers, scalars and types.
// Built with nlohmann::ordered_json: keys keep the order written here, output is deterministic.
#include <map>
#include <string>
#include <vector>

#include "ir/kernel.h"
#include "support/output_set.h"

namespace mtlgen::emit {

// What the other backends write: per kernel name, and once for the library. Sorted paths.
struct GeneratedFiles {
  std::map<std::string, std::vector<std::string>> per_kernel;
  std::vector<std::string> library;
};

// Runs every shipped emitter (emit::generate_all) into memory to learn the files it writes.
GeneratedFiles generated_files(const std::vector<ir::Kernel>& kernels);

// The files in `out` (what the other backends wrote), grouped as generated_files() groups them:
// `<kernel>/...` paths per kernel, everything else plus the manifest itself for the library.
GeneratedFiles files_in(const support::OutputSet& out, const std::vector<ir::Kernel>& kernels);

// The manifest text: 2-space indented JSON with a trailing newline.
std::string manifest_json(const std::vector<ir::Kernel>& kernels, const GeneratedFiles& files);

// Adds manifest.json to `out`, which holds what emit::generate_all wrote for `kernels`. Not a
// registered emitter: the driver runs it after them, because it lists their files.
void emit_manifest(const std::vector<ir::Kernel>& kernels, support::OutputSet& out);

inline constexpr const char* kManifestPath = "manifest.json";

}  // namespace mtlgen::emit
