#include "emit_common/emitter.h"
#include "emit_objc/harness_emitter.h"
#include "emit_objc/objc_emitter.h"

MTLGEN_EMITTER(objc) = {.name = "objc",
                        .description = "Objective-C++ pipelines and typed encode calls, with a plain C++ facade",
                        .emit_kernel = mtlgen::emit::emit_objc,
                        .emit_library = mtlgen::emit::emit_objc_support,
                        .families = true};

MTLGEN_EMITTER(harness) = {.name = "harness",
                           .description = "Objective-C++ timing and autotune programs, and the CMake build for macOS",
                           .emit_kernel = mtlgen::emit::emit_harness,
                           .emit_library = mtlgen::emit::emit_harness_support,
                           .families = true};
