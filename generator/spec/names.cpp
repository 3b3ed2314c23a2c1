#include "spec/names.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

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
    "main", "NULL", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t"};

// MSL specification (v3.1) §1-§2: address spaces, function qualifiers, scalar and other type names
// (vector and matrix names are matched by is_msl_vector_or_matrix).
constexpr std::array kMslLanguage = {
    "device", "constant", "threadgroup", "threadgroup_imageblock", "thread", "ray_data", "object_data",
    "kernel", "vertex", "fragment", "visible", "metal", "half", "bfloat", "uint", "ushort", "uchar", "ulong",
    "size_t", "ptrdiff_t", "vec", "simd", "array", "atomic", "atomic_int", "atomic_uint", "atomic_bool",
    "atomic_float", "atomic_ulong", "texture1d", "texture2d", "texture3d", "texturecube", "depth2d",
    "texture_buffer", "sampler", "as_type", "mem_flags", "memory_order", "memory_order_relaxed",
    "thread_scope", "numeric_limits", "fast", "precise", "INFINITY", "NAN"};

// metal_stdlib functions a kernel calls unqualified after `using namespace metal`: a dim or scalar
// of the same name, declared as a local by the kernel's prologue (or a buffer, a parameter), would
// hide them. MSL
// specification (v3.1) §6.2 common (metal_common), §6.3 integer (metal_integer), §6.4 relational
// (metal_relational), §6.5 math (metal_math), §6.6 matrix, §6.7 geometric (metal_geometric),
// §6.9 simd-group and quad-group, §6.9.1 synchronization, §6.13 pack/unpack, §6.15 atomics,
// simdgroup_matrix functions.
constexpr std::array kMslFunctions = {
    // common
    "clamp", "mix", "saturate", "sign", "smoothstep", "step",
    // integer
    "abs", "absdiff", "addsat", "clz", "ctz", "extract_bits", "hadd", "insert_bits", "mad24", "madhi", "madsat",
    "max", "max3", "median3", "min", "min3", "mul24", "mulhi", "popcount", "reverse_bits", "rhadd", "rotate",
    "subsat",
    // relational
    "all", "any", "isfinite", "isinf", "isnan", "isnormal", "isordered", "isunordered", "select", "signbit",
    // math
    "acos", "acosh", "acospi", "asin", "asinh", "asinpi", "atan", "atan2", "atanh", "atanpi", "atan2pi", "cbrt",
    "ceil", "copysign", "cos", "cosh", "cospi", "divide", "exp", "exp2", "exp10", "fabs", "fdim", "floor", "fma",
    "fmax", "fmax3", "fmedian3", "fmin", "fmin3", "fmod", "fract", "frexp", "ilogb", "ldexp", "log", "log2",
    "log10", "modf", "nextafter", "pow", "powr", "rint", "round", "rsqrt", "sin", "sincos", "sinh", "sinpi",
    "sqrt", "tan", "tanh", "tanpi", "trunc",
    // matrix and geometric
    "determinant", "transpose", "cross", "distance", "distance_squared", "dot", "faceforward", "length",
    "length_squared", "normalize", "reflect", "refract",
    // simd-group and quad-group
    "simd_active_threads_mask", "simd_all", "simd_and", "simd_any", "simd_ballot", "simd_broadcast",
    "simd_broadcast_first", "simd_is_first", "simd_max", "simd_min", "simd_or", "simd_prefix_exclusive_product",
    "simd_prefix_exclusive_sum", "simd_prefix_inclusive_product", "simd_prefix_inclusive_sum", "simd_product",
    "simd_shuffle", "simd_shuffle_and_fill_down", "simd_shuffle_and_fill_up", "simd_shuffle_down",
    "simd_shuffle_rotate_down", "simd_shuffle_rotate_up", "simd_shuffle_up", "simd_shuffle_xor", "simd_sum",
    "simd_xor", "quad_active_threads_mask", "quad_all", "quad_and", "quad_any", "quad_ballot", "quad_broadcast",
    "quad_broadcast_first", "quad_is_first", "quad_max", "quad_min", "quad_or", "quad_prefix_exclusive_product",
    "quad_prefix_exclusive_sum", "quad_prefix_inclusive_product", "quad_prefix_inclusive_sum", "quad_product",
    "quad_shuffle", "quad_shuffle_and_fill_down", "quad_shuffle_and_fill_up", "quad_shuffle_down",
    "quad_shuffle_rotate_down", "quad_shuffle_rotate_up", "quad_shuffle_up", "quad_shuffle_xor", "quad_sum",
    "quad_xor",
    // synchronization
    "threadgroup_barrier", "simdgroup_barrier", "atomic_thread_fence", "mem_none", "mem_device",
    "mem_threadgroup", "mem_texture", "mem_threadgroup_imageblock", "mem_object_data",
    // pack and unpack
    "pack_float_to_snorm4x8", "pack_float_to_unorm4x8", "pack_float_to_snorm2x16", "pack_float_to_unorm2x16",
    "unpack_snorm4x8_to_float", "unpack_unorm4x8_to_float", "unpack_snorm2x16_to_float",
    "unpack_unorm2x16_to_float", "unpack_unorm4x8_to_half", "unpack_snorm4x8_to_half",
    // atomics
    "atomic_store_explicit", "atomic_load_explicit", "atomic_exchange_explicit",
    "atomic_compare_exchange_weak_explicit", "atomic_fetch_add_explicit", "atomic_fetch_and_explicit",
    "atomic_fetch_max_explicit", "atomic_fetch_min_explicit", "atomic_fetch_or_explicit",
    "atomic_fetch_sub_explicit", "atomic_fetch_xor_explicit",
    // simdgroup_matrix
    "simdgroup_load", "simdgroup_store", "simdgroup_multiply", "simdgroup_multiply_accumulate",
    "make_filled_simdgroup_matrix", "simdgroup_matrix", "simdgroup_float8x8", "simdgroup_half8x8",
    "simdgroup_bfloat8x8"};

// Objective-C keywords and names the glue itself declares in every class. The contextual
// qualifiers in/out/inout/bycopy/byref/oneway only apply inside protocol method declarations.
constexpr std::array kObjc = {
    "id", "self", "super", "nil", "Nil", "YES", "NO", "SEL", "IMP", "BOOL", "Class",
    "instancetype", "nonatomic", "strong", "weak", "assign", "copy", "readonly",
    "readwrite", "nonnull", "nullable", "encoder", "error", "pipeline", "library", "device", "dims", "scalars",
    "types", "tuning",
    "description", "hash", "init", "alloc", "new", "release", "retain", "dealloc"};

// Names the generated C++ declares in the namespace of a kernel (<kernel>_types.h, the facade,
// the reference), where dims and tunables become locals and buffers parameters: a spec name equal
// to one would hide it from the code that follows.
constexpr std::array kGeneratedCpp = {
    "Dims", "Scalars", "FunctionConstants", "Tuning", "Types", "Params", "Cost", "CostQuantity", "kCostQuantities",
    "Buffers", "Options", "Impl",
    "kName", "kMslVersion", "kParamsIndex", "kThreadgroupArrays", "make_params", "describe", "check_dims",
    "threadgroups", "threads_per_threadgroup", "max_threads_per_threadgroup", "threadgroup_memory_bytes",
    "body_threadgroup_memory_bytes", "threadgroup_memory_total_bytes",
    "entry_point", "types_key", "tuning_values", "set_tunable", "reference", "DType",
    // the variant table and the glue's description of the kernel (<kernel>_types.h)
    "KernelInfo", "CompiledVariant", "kVariants", "kTypeChoices", "same_types", "same_tuning",
    "KernelFacade", "NoFunctionConstants"};

// Names the Objective-C++ glue declares where derived names live: the encode methods' fixed
// parameters and locals, the initializers' parameters, the implementation's file-scope helpers
// (templates/objc/class.mm, family.mm), read with the derived names in scope.
constexpr std::array kGlue = {
    "encoder", "dims", "scalars", "types", "tuning", "error", "library", "tuningTable", "functionConstants",
    "device", "pipeline", "pipelines", "variantIndex", "typesIndex", "threadsPerThreadgroup",
    "threadgroupsPerGrid", "params", "failure", "glue", "impl", "elements", "entryPoints", "environment",
    "table", "tuned", "unknown", "source", "values", "constants", "concurrent", "resources", "dispatch",
    "kernel", "family", "options", "buffers", "kVariants", "kTypeChoices", "kName", "kParamsIndex",
    "entryPoint", "std", "mtlgen", "Glue", "Buffers", "Encode", "ConstantValues"};

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

// MSL vector and matrix type names (§2.2, §2.3): float4, packed_half2, bool3, float3x4.
bool is_msl_vector_or_matrix(std::string_view name) {
  if (name.substr(0, 7) == "packed_") name.remove_prefix(7);
  for (std::string_view base : {"bool", "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "half",
                                "float", "bfloat"}) {
    if (name.substr(0, base.size()) != base) continue;
    std::string_view rest = name.substr(base.size());
    auto dim = [](char c) { return c >= '2' && c <= '4'; };
    if (rest.size() == 1 && dim(rest[0])) return true;
    if (rest.size() == 3 && dim(rest[0]) && rest[1] == 'x' && dim(rest[2])) return true;
  }
  return false;
}

// [lex.name]: identifiers containing `__`, or starting with `_` and an uppercase letter.
bool reserved_to_cpp_implementation(std::string_view name) {
  return name.find("__") != std::string_view::npos ||
         (name.size() > 1 && name[0] == '_' && std::isupper(static_cast<unsigned char>(name[1])));
}

bool is_helper_name(std::string_view name) {
  for (const auto& h : ir::all_helpers()) {
    if (name == h.name) return true;
    for (const auto& other : h.also_named) {
      if (name == other) return true;
    }
  }
  return false;
}

}  // namespace

const char* reserved_by(std::string_view name) {
  if (contains(kMtlgen, name) || name.substr(0, 6) == "mtlgen" || name.substr(0, 2) == "__") return "mtlgen";
  if (contains(kCpp, name)) return "C++";
  if (reserved_to_cpp_implementation(name)) return "C++ (names with `__`, or `_` and a capital, belong to the compiler)";
  if (contains(kMslLanguage, name) || is_msl_vector_or_matrix(name)) return "MSL";
  if (contains(kObjc, name)) return "Objective-C";
  if (contains(kMacros, name)) return "a macro of the C, C++ or Metal headers";
  if (contains(kGeneratedCpp, name)) return "the generated C++ (<kernel>_types.h and the reference declare it)";
  if (ir::builtin_from_name(name)) return "mtlgen (a thread-position builtin)";
  if (is_helper_name(name)) return "mtlgen (a threadgroup helper)";
  return nullptr;
}

const char* reserved_in_kernel(std::string_view name) {
  return contains(kMslFunctions, name) ? "MSL (a metal_stdlib function the kernel calls unqualified)" : nullptr;
}

const char* reserved_in_glue(std::string_view name) {
  if (contains(kCpp, name) || contains(kObjc, name)) return "Objective-C++";
  if (contains(kGlue, name)) return "the Objective-C++ glue (its own parameter or local)";
  if (name.substr(0, 1) == "_") return "the Objective-C++ glue (its instance variables start with `_`)";
  return nullptr;
}

}  // namespace mtlgen::spec
