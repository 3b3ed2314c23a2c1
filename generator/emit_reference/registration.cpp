#include "emit_common/emitter.h"
#include "emit_reference/reference_emitter.h"

MTLGEN_EMITTER(types) = {.name = "types",
                         .description = "host-side kernel description shared by reference, glue and simulator",
                         .emit_kernel = mtlgen::emit::emit_types,
                         .emit_library = mtlgen::emit::emit_host_support,
                         .hand_written_kernels = true,
                         .families = true};

MTLGEN_EMITTER(reference) = {.name = "reference",
                             .description = "serial C++ reference implementation",
                             .emit_kernel = mtlgen::emit::emit_reference,
                             .emit_library = nullptr,
                             .hand_written_kernels = true,
                             .families = true};
