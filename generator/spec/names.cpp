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

// Macros and macro-like names of the headers generated code includes: <cmath>/<math.h>, <cerrno>,
// <climits>, <cfloat>, <cstdint>, <cassert> on the host and the simulator's shim; metal_stdlib's
// math constants and limits (MSL specification v3.1 §6.5 "Math Functions" constants and §6.13
// "Numeric Limits"). A dim named `M_PI` or `errno` would be replaced by the preprocessor.
constexpr std::array kMacros = {
    "errno", "assert", "NDEBUG", "EOF", "NAN", "INFINITY", "HUGE_VAL", "HUGE_VALF", "MAXFLOAT",
    "M_E", "M_LOG2E", "M_LOG10E", "M_LN2", "M_LN10", "M_PI", "M_PI_2", "M_PI_4", "M_1_PI", "M_2_PI",
    "M_2_SQRTPI", "M_SQRT2", "M_SQRT1_2", "M_E_F", "M_PI_F", "M_PI_2_F", "M_PI_4_F", "M_1_PI_F",
    "M_2_PI_F", "M_SQRT2_F", "M_SQRT1_2_F", "M_LN2_F", "M_LN10_F", "M_LOG2E_F", "M_LOG10E_F", "M_E_H",
    "M_PI_H", "M_PI_2_H", "M_PI_4_H", "M_SQRT2_H", "M_LN2_H", "HALF_MAX", "HALF_MIN", "HALF_EPSILON",
    "HALF_DIG", "HALF_MANT_DIG", "HALF_MAX_EXP", "HALF_MIN_EXP", "FLT_MAX", "FLT_MIN", "FLT_EPSILON",
    "FLT_DIG", "FLT_MANT_DIG", "FLT_MAX_EXP", "FLT_MIN_EXP", "FLT_RADIX", "DBL_MAX", "DBL_MIN",
    "DBL_EPSILON", "CHAR_BIT", "CHAR_MAX", "CHAR_MIN", "SCHAR_MAX", "SCHAR_MIN", "UCHAR_MAX", "SHRT_MAX",
    "SHRT_MIN", "USHRT_MAX", "INT_MAX", "INT_MIN", "UINT_MAX", "LONG_MAX", "LONG_MIN", "ULONG_MAX",
    "INT8_MAX", "INT8_MIN", "INT16_MAX", "INT16_MIN", "INT32_MAX", "INT32_MIN", "INT64_MAX", "INT64_MIN",
    "UINT8_MAX", "UINT16_MAX", "UINT32_MAX", "UINT64_MAX", "SIZE_MAX", "FP_NAN", "FP_INFINITE", "FP_ZERO",
    "FP_NORMAL", "FP_SUBNORMAL", "FP_ILOGB0", "FP_ILOGBNAN", "MATH_ERRNO", "MATH_ERREXCEPT",
    "EDOM", "ERANGE", "EILSEQ", "stdin", "stdout", "stderr", "offsetof", "TRUE", "FALSE", "nil"};

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
  if (contains(kMacros, name)) return "a macro of the C, C++ or Metal headers";
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
