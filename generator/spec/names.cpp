#include "spec/names.h"

#include <algorithm>
#include <array>

#include "ir/builtins.h"
#include "ir/kernel.h"

namespace mtlgen::spec {

namespace {

// C++20 keywords and alternative tokens (ISO/IEC 14882:2020 [lex.key], [lex.digraph]).
constexpr std::array kCpp = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
    "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
    "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
    "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
    "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
    "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
    "requires", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
    "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename",
    "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq", "std",
    "main", "NULL"};

// MSL specification (v3.1) §1-§2: address spaces, function qualifiers, scalar and vector type names;
// plus metal_stdlib names kernels call unqualified after `using namespace metal`.
constexpr std::array kMsl = {
    "device", "constant", "threadgroup", "threadgroup_imageblock", "thread", "ray_data", "object_data",
    "kernel", "vertex", "fragment", "visible", "metal", "half", "bfloat", "uint", "ushort", "uchar", "ulong",
    "size_t", "ptrdiff_t", "float2", "float3", "float4", "half2", "half3", "half4", "int2", "int3", "int4",
    "uint2", "uint3", "uint4", "vec", "packed_float4", "simd", "atomic", "atomic_int", "atomic_uint",
    "texture2d", "sampler", "min", "max", "abs", "clamp", "select", "fma", "dot", "exp", "log", "sqrt",
    "rsqrt", "pow", "isnan", "isinf", "as_type", "mem_flags", "threadgroup_barrier", "simdgroup_barrier",
    "simd_sum", "simd_max", "simd_min", "simd_shuffle", "simd_shuffle_down", "simd_shuffle_up",
    "simd_shuffle_xor", "simd_broadcast", "simd_any", "simd_all", "simd_ballot", "numeric_limits", "fast",
    "precise", "INFINITY", "NAN"};

// Objective-C keywords and names the glue itself declares in every class. The contextual
// qualifiers in/out/inout/bycopy/byref/oneway only apply inside protocol method declarations.
constexpr std::array kObjc = {
    "id", "self", "super", "nil", "Nil", "YES", "NO", "SEL", "IMP", "BOOL", "Class",
    "instancetype", "nonatomic", "strong", "weak", "assign", "copy", "readonly",
    "readwrite", "nonnull", "nullable", "encoder", "error", "pipeline", "library", "device", "dims", "scalars",
    "types", "tuning",
    "description", "hash", "init", "alloc", "new", "release", "retain", "dealloc"};

// Names the generated code uses in every kernel's scope (function_constants: the reference's parameter).
constexpr std::array kMtlgen = {"params", "mtlgen", "T_params", "value_index", "function_constants"};

template <size_t N>
bool contains(const std::array<const char*, N>& list, std::string_view name) {
  return std::any_of(list.begin(), list.end(), [&](const char* w) { return name == w; });
}

}  // namespace

const char* reserved_by(std::string_view name) {
  if (contains(kCpp, name)) return "C++";
  if (contains(kMsl, name)) return "MSL";
  if (contains(kObjc, name)) return "Objective-C";
  if (contains(kMtlgen, name) || name.substr(0, 6) == "mtlgen" || name.substr(0, 2) == "__") return "mtlgen";
  if (ir::builtin_from_name(name)) return "mtlgen (a thread-position builtin)";
  for (const auto& h : ir::all_helpers()) {
    if (name == h.name) return "mtlgen (a threadgroup helper)";
    for (const auto& other : h.also_named) {
      if (name == other) return "mtlgen (a threadgroup helper)";
    }
  }
  return nullptr;
}

}  // namespace mtlgen::spec
