#include "ir/builtins.h"

namespace mtlgen::ir {

const std::vector<BuiltinInfo>& all_builtins() {
  static const std::vector<BuiltinInfo> table = {
      {Builtin::thread_position_in_grid, "gid", "thread_position_in_grid", true,
       "position of this thread in the grid"},
      {Builtin::thread_position_in_threadgroup, "lid", "thread_position_in_threadgroup", true,
       "position of this thread in its threadgroup"},
      {Builtin::threadgroup_position_in_grid, "tgid", "threadgroup_position_in_grid", true,
       "position of this threadgroup in the grid"},
      {Builtin::threads_per_grid, "grid_size", "threads_per_grid", true, "threads in the grid"},
      {Builtin::threads_per_threadgroup, "tg_size", "threads_per_threadgroup", true,
       "threads in one threadgroup"},
      {Builtin::threadgroups_per_grid, "tg_count", "threadgroups_per_grid", true, "threadgroups in the grid"},
      {Builtin::thread_index_in_threadgroup, "local_index", "thread_index_in_threadgroup", false,
       "linear index of this thread in its threadgroup"},
      {Builtin::thread_index_in_simdgroup, "simd_lane", "thread_index_in_simdgroup", false,
       "lane of this thread in its simdgroup (0..31)"},
      {Builtin::simdgroup_index_in_threadgroup, "simd_group", "simdgroup_index_in_threadgroup", false,
       "index of this thread's simdgroup in the threadgroup"},
      {Builtin::simdgroups_per_threadgroup, "simd_groups", "simdgroups_per_threadgroup", false,
       "simdgroups in one threadgroup"},
      {Builtin::threads_per_simdgroup, "simd_width", "threads_per_simdgroup", false,
       "threads in a simdgroup (32 on every Apple GPU)"},
  };
  return table;
}

const BuiltinInfo& info(Builtin b) { return all_builtins()[static_cast<size_t>(b)]; }

std::optional<Builtin> builtin_from_name(std::string_view name) {
  for (const auto& b : all_builtins()) {
    if (name == b.name) return b.builtin;
  }
  return std::nullopt;
}

std::string builtin_msl_type(Builtin b, int rank) {
  if (!info(b).per_dimension || rank <= 1) return "uint";
  return rank == 2 ? "uint2" : "uint3";
}

}  // namespace mtlgen::ir
