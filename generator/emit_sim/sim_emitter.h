#pragma once
// The simulator backend: what `verify` compiles beside a kernel's types header and reference to
// run it on Linux. Per kernel, under sim/<kernel>/: the kernel's MSL as the simulator compiles it
// (mtlsim::prepare_msl_for_sim of the emitted .metal, or the hand-written file), a launcher with
// one mtlsim::KernelThreadFn per variant, and a bridge that exposes the generated host
// description (mtlsim_host_dispatch) and the reference as C functions. Never shipped: `generate`
// does not write these files; verify asks for this emitter by name.
#include <set>
#include <string>
#include <vector>

#include "ir/kernel.h"
#include "support/output_set.h"

namespace mtlgen::emit {

void emit_sim(const ir::Kernel& kernel, support::OutputSet& out);

// emit_sim with launchers and MSL instantiations for the variants named in `entry_points` only
// (every variant when it is empty): a module that runs three of eighteen variants compiles three.
// The bridge keeps every variant (mtlsim_host_dispatch takes the index in kernel.variants) and the
// bodies keep their lines (the instantiations come after them). A hand-written kernel's copies
// of its file and headers lose their explicit instantiations, whichever variants run, their lines
// blanked (msl::drop_explicit_instantiations): the launchers' calls instantiate what runs.
void emit_sim_variants(const ir::Kernel& kernel, const std::set<std::string>& entry_points, support::OutputSet& out);

// A hand-written kernel's simulator kernel object: its file and headers as the simulator compiles
// them (explicit instantiations blanked, `loop_forms` inserted into the file or the header that
// defines each kernel: ir::with_loop_forms)
// and one launcher per entry of `launchers` (ir::SourceKernel::launchers), under kSourceObjectDir.
// Nothing in it names the spec or the kernel: verify caches the object by content, so every spec
// and kernel of the file shares it. emit_sim writes only the bridge for such a kernel.
inline constexpr const char* kSourceObjectDir = "sim/source/";
void emit_sim_source_object(const ir::Kernel& kernel, const std::vector<ir::SourceLauncher>& launchers,
                            const std::vector<ir::LoopFormKernel>& loop_forms, support::OutputSet& out);
// The loop forms (ir::SourceKernel::loop_forms) of the kernel functions `launchers` call, made or
// refused, in the order of the file's parse.
std::vector<ir::LoopFormKernel> launched_loop_forms(const ir::Kernel& kernel,
                                                    const std::vector<ir::SourceLauncher>& launchers);
// The copy of the file in it (its own file name, ending in .metal), and the launchers' unit.
std::string source_object_file_name(const ir::Kernel& kernel);
std::string source_object_launcher_path();

// Where emit_sim puts `kernel`'s files, relative to the module's root.
std::string sim_dir(const ir::Kernel& kernel);
std::string sim_launcher_path(const ir::Kernel& kernel);
std::string sim_bridge_path(const ir::Kernel& kernel);

// Symbol of a variant's launcher (a KernelThreadFn).
std::string launcher_symbol(const ir::Variant& variant);
// Symbol of a variant's loop-form launcher (a KernelGroupFn), compiled only where the front end
// made a loop form (docs/simulator.md).
std::string group_symbol(const ir::Variant& variant);

// Symbol of a variant's reference entry (mtlsim_reference_<symbol>): one per type combination,
// or per variant when the reference reads tunables.
std::string reference_symbol(const ir::Kernel& kernel, const ir::Variant& variant);

}  // namespace mtlgen::emit
