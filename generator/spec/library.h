#pragma once
// A library of specs: which files the command line names, how a spec path is shown, and the
// rules that span specs (one kernel name per library, a family's kernels listed as kernels).
// Everything the front end decides before any emitter runs.
#include <filesystem>
#include <string>
#include <vector>

#include "ir/kernel.h"
#include "support/diagnostics.h"

namespace mtlgen::spec {

// Expands files and directories (directories: every *.yaml inside, sorted) into spec paths.
std::vector<std::filesystem::path> collect_spec_files(const std::vector<std::string>& inputs,
                                                      support::Diagnostics& diags);

// How a spec path is shown in diagnostics and generated banners: relative to the working
// directory when it lies below it, '/'-separated, so output does not depend on where a checkout lives.
std::string display_path(const std::filesystem::path& spec);

// Loads and validates every spec, each once (a spec borrowed by several families too: its errors are
// reported once); a rejected one is left out. A family's kernels are kernels of the library (emitted
// and verified on their own) and come before the family; a kernel borrowed from another spec is
// listed once, whichever spec reaches it first. A kernel name declared twice across
// the library is an error at the second declaration. `include_dirs` (the command
// line's -I) are searched by every `source:` kernel after its spec's own `include_dirs:`.
std::vector<ir::Kernel> load_library(const std::vector<std::filesystem::path>& specs, support::Diagnostics& diags,
                                     const std::vector<std::string>& include_dirs = {});

}  // namespace mtlgen::spec
