// The arguments a launcher passes to a generated kernel, in its binding table's order. The
// simulator's and the CUDA launcher share the table and the buffer and parameter slots; they differ
// only in where threadgroup memory and builtins come from, which the spelling says.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/kernel.h"

namespace mtlgen::emit {

struct LaunchArgSpelling {
  // "const " where the launcher may bind the parameter struct as a const reference.
  std::string params_qualifier;
  // The expression of threadgroup array `index` as a `type*`.
  std::function<std::string(const std::string& type, size_t index)> threadgroup_array;
  // The expression of builtin `b`, whose MSL type is `msl_type`.
  std::function<std::string(ir::Builtin b, const std::string& msl_type)> builtin;
};

// Buffers are slot[i], the parameter struct slot[buffers.size()].
std::vector<std::string> generated_launch_args(const ir::Kernel& k, const ir::Variant& v,
                                               const LaunchArgSpelling& spelling);

}  // namespace mtlgen::emit
