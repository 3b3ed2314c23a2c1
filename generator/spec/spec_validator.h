#pragma once
// Semantic checks on a parsed kernel, and the data every consumer derives the same way:
// buffer indices, the binding table (binding_table.h), variants (type parameters x tune points,
// variants.h), helpers and builtins the body uses. Test cases are checked against the variants in
// case_checks.h, input fills in fill_checks.h. After validate_kernel() succeeds the IR is final
// and immutable.
#include <functional>

#include "ir/kernel.h"
#include "support/diagnostics.h"

namespace mtlgen::spec {

inline constexpr int kMaxBufferIndex = 30;           // Metal's buffer argument table has 31 slots
inline constexpr int64_t kMaxFunctionConstantIndex = 65535;  // MSL's range for [[function_constant(i)]]
inline constexpr int64_t kMaxThreadgroupBytes = 32768;
inline constexpr int64_t kMaxThreadsPerThreadgroup = 1024;
inline constexpr size_t kMaxVariants = 256;
inline constexpr size_t kMaxKernelNameLength = 64;

// Runs right after the variants are built, before bindings and tests are checked: a hand-written
// kernel (`source:`) keeps the variants its entry points name and binds their parameters there.
using VariantBinder = std::function<void(ir::Kernel&)>;

bool validate_kernel(ir::Kernel& kernel, support::Diagnostics& diags, VariantBinder bind_variants = {});

// `setThreadgroupMemoryLength` takes multiples of 16 bytes.
inline int64_t round_up_16(int64_t bytes) { return (bytes + 15) / 16 * 16; }

}  // namespace mtlgen::spec
