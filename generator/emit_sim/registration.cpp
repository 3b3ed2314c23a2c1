#include "emit_common/emitter.h"
#include "emit_sim/sim_emitter.h"

MTLGEN_EMITTER(sim) = {.name = "sim",
                       .description = "simulator launchers and host-description bridge that verify compiles (not shipped)",
                       .emit_kernel = mtlgen::emit::emit_sim,
                       .emit_library = nullptr,
                       .hand_written_kernels = true,
                       .families = true,
                       .ships = false};
