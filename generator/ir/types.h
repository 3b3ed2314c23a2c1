#pragma once
// Element types a spec can name, with their spelling in each target.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mtlgen::ir {

enum class ScalarType { f32, f16, bf16, i8, i16, i32, u8, u16, u32, bytes, boolean };

struct ScalarTypeInfo {
  ScalarType type;
  const char* spec_name;   // as written in specs: float, half, bfloat, int8, ..., bytes, bool
  const char* msl;         // MSL spelling
  const char* cpp;         // C++ reference spelling (half/bfloat are exact emulations)
  const char* suffix;      // entry-point suffix: f32, f16, bf16, i8, ...
  int size;                // bytes per element
  bool is_float;
  bool is_signed;
};

const ScalarTypeInfo& info(ScalarType t);
std::optional<ScalarType> scalar_type_from_spec(std::string_view name);
std::vector<std::string> spec_type_names();  // for did-you-mean and the schema

// Adds `sizeof` of every concrete element type (`float` -> 4, ...) to `sizes`, so expressions that
// name a concrete type evaluate wherever type parameters do.
void add_concrete_type_sizes(std::map<std::string, int64_t>& sizes);

// Minimum MSL version (as "3.1") that can spell `t`.
std::string min_msl_version(ScalarType t);

}  // namespace mtlgen::ir
