#include "ir/types.h"

#include <array>

namespace mtlgen::ir {

namespace {

constexpr std::array<ScalarTypeInfo, 11> kTypes = {{
    {ScalarType::f32, "float", "float", "float", "f32", 4, true, true},
    {ScalarType::f16, "half", "half", "mtlgen::half", "f16", 2, true, true},
    {ScalarType::bf16, "bfloat", "bfloat", "mtlgen::bfloat", "bf16", 2, true, true},
    {ScalarType::i8, "int8", "char", "int8_t", "i8", 1, false, true},
    {ScalarType::i16, "int16", "short", "int16_t", "i16", 2, false, true},
    {ScalarType::i32, "int32", "int", "int32_t", "i32", 4, false, true},
    {ScalarType::u8, "uint8", "uchar", "uint8_t", "u8", 1, false, false},
    {ScalarType::u16, "uint16", "ushort", "uint16_t", "u16", 2, false, false},
    {ScalarType::u32, "uint32", "uint", "uint32_t", "u32", 4, false, false},
    {ScalarType::bytes, "bytes", "uchar", "uint8_t", "u8", 1, false, false},
    {ScalarType::boolean, "bool", "bool", "bool", "b", 1, false, false},
}};

}  // namespace

const ScalarTypeInfo& info(ScalarType t) { return kTypes[static_cast<size_t>(t)]; }

std::optional<ScalarType> scalar_type_from_spec(std::string_view name) {
  for (const auto& t : kTypes) {
    if (name == t.spec_name) return t.type;
  }
  return std::nullopt;
}

std::vector<std::string> spec_type_names() {
  std::vector<std::string> names;
  for (const auto& t : kTypes) names.emplace_back(t.spec_name);
  return names;
}

void add_concrete_type_sizes(std::map<std::string, int64_t>& sizes) {
  for (const auto& t : kTypes) sizes.emplace(t.spec_name, t.size);
}

std::string min_msl_version(ScalarType t) { return t == ScalarType::bf16 ? "3.1" : "3.0"; }

}  // namespace mtlgen::ir
