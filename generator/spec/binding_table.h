#pragma once
// The binding table of a validated kernel (ir::Kernel::params): buffers, the parameter struct,
// threadgroup arrays and builtins in the order the MSL signature, the host glue and the
// simulator's launcher all bind them; and the fields of the parameter struct.
#include "ir/kernel.h"

namespace mtlgen::spec {

void build_binding_table(ir::Kernel& kernel);

}  // namespace mtlgen::spec
