#include "emit_common/emitter.h"
#include "emit_msl/msl_emitter.h"

MTLGEN_EMITTER(msl) = {.name = "msl",
                       .description = "Metal kernel source, one entry point per variant",
                       .emit_kernel = mtlgen::emit::emit_msl,
                       .emit_library = nullptr};
