// Host-side vocabulary shared by every generated kernel header: element types known at run time
// and the checks that turn a spec's constraints into exceptions with the spec's wording.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace mtlgen {

enum class DType : uint8_t { f32, f16, bf16, i8, i16, i32, u8, u16, u32 };

constexpr int dtype_size(DType t) {
  switch (t) {
    case DType::f32: case DType::i32: case DType::u32: return 4;
    case DType::f16: case DType::bf16: case DType::i16: case DType::u16: return 2;
    case DType::i8: case DType::u8: return 1;
  }
  return 0;
}

constexpr const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "float";
    case DType::f16: return "half";
    case DType::bf16: return "bfloat";
    case DType::i8: return "int8";
    case DType::i16: return "int16";
    case DType::i32: return "int32";
    case DType::u8: return "uint8";
    case DType::u16: return "uint16";
    case DType::u32: return "uint32";
  }
  return "?";
}

// Throws std::invalid_argument("<kernel>: <message> (<values>)") when `ok` is false.
inline void require(bool ok, const char* kernel, const char* message, const std::string& values) {
  if (!ok) throw std::invalid_argument(std::string(kernel) + ": " + message + " (" + values + ")");
}

// A buffer must hold at least the elements its shape needs.
inline void require_elements(uint64_t have, int64_t need, const char* kernel, const char* buffer) {
  if (need < 0 || have < static_cast<uint64_t>(need)) {
    throw std::invalid_argument(std::string(kernel) + ": buffer `" + buffer + "` holds " + std::to_string(have) +
                                " elements; its shape needs " + std::to_string(need));
  }
}

// The function constants of a kernel that has none, so that its reference and glue take the same
// arguments as every other kernel's.
struct NoFunctionConstants {};

// The scalars, tunables or type parameters of a kernel that has none, so that its reference and
// glue take the same arguments as every other kernel's. `KernelDims` is the kernel's own Dims: its
// empty sets stay types of its own, and argument-dependent lookup still finds its functions
// (`max_threads_per_threadgroup(tuning)`).
template <class KernelDims>
struct NoScalars {};
template <class KernelDims>
struct NoTuning {};
template <class KernelDims>
struct NoTypes {};

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace mtlgen
