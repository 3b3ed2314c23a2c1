#pragma once
// Thread-position builtins a kernel body may use by name. The generator declares a builtin as a
// kernel parameter only when the body (or a helper it calls) uses the name.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mtlgen::ir {

enum class Builtin {
  thread_position_in_grid,
  thread_position_in_threadgroup,
  threadgroup_position_in_grid,
  threads_per_grid,
  threads_per_threadgroup,
  threadgroups_per_grid,
  thread_index_in_threadgroup,
  thread_index_in_simdgroup,
  simdgroup_index_in_threadgroup,
  simdgroups_per_threadgroup,
  threads_per_simdgroup,
};

struct BuiltinInfo {
  Builtin builtin;
  const char* name;       // identifier in kernel bodies
  const char* attribute;  // MSL attribute
  bool per_dimension;     // uint / uint2 / uint3 following the dispatch's rank; else always uint
  const char* meaning;    // one line, for docs and --help
};

const std::vector<BuiltinInfo>& all_builtins();
const BuiltinInfo& info(Builtin b);
std::optional<Builtin> builtin_from_name(std::string_view name);

// MSL type of the builtin for a dispatch of `rank` dimensions (1..3).
std::string builtin_msl_type(Builtin b, int rank);

}  // namespace mtlgen::ir
