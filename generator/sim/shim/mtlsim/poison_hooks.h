// Entry points of the compiler instrumentation that lets the simulator see where poison (the NaN
// patterns of never-written threadgroup memory, mtlsim/runtime.h, and the 0xFE bytes that
// -ftrivial-auto-var-init=pattern gives uninitialised private variables) decides something, and
// where an array is indexed outside its bounds:
//   -fsanitize-coverage=trace-cmp      calls __sanitizer_cov_trace_cmp* before every comparison
//                                      (and switch) with its operands;
//   -fsanitize=float-cast-overflow     calls __ubsan_handle_float_cast_overflow when a float
//                                      converted to an integer is out of range, NaN included;
//   -fsanitize=bounds                  calls __ubsan_handle_out_of_bounds when an array whose size
//                                      the type says (a private array, a threadgroup array declared
//                                      in a body) is indexed outside it.
// Verify compiles every TU of a module with these flags and force-includes this header
// (-include mtlsim/poison_hooks.h), so each TU defines the hooks itself: no libubsan is linked
// (-static-libubsan finds nothing left to resolve), and a call costs a direct call and a compare.
// The hooks hand only NaN operands (and integers holding the f32 poison's bits) to the runtime,
// which decides whether they are poison and whether a kernel thread is running.
#pragma once
#pragma GCC system_header

#include <cstdint>
#include <cstring>

extern "C" {
// In the simulator runtime (runtime/poison_uses.cpp). `pc`: the return address of the hook, in
// the kernel's code. `other`: the other operand's bits (a conversion's range check compares the
// value with the integer type's bounds).
void mtlsim_poison_compared(uint32_t bits, uint32_t other, void* pc);
// A float (of `float_bits` width, value bits in `bits`) converted to an integer of `int_bits`.
void mtlsim_poison_converted(uint32_t bits, uint32_t float_bits, uint32_t int_bits, bool int_signed, void* pc);
// Element `index` of an array of type `array_type` ("'float [8]'") accessed at `line`.
void mtlsim_array_out_of_bounds(int line, int64_t index, const char* array_type, void* pc);
}

namespace mtlsim::hooks {

inline constexpr uint32_t kIntPoison = 0x7FC0DEADu;  // mtlsim::poison_bits_f32() read as an integer
// -ftrivial-auto-var-init=pattern's bytes in a 32-bit value (-1.69e38 as a float).
inline constexpr uint32_t kPrivatePattern = 0xFEFEFEFEu;

// An integer of an uninitialised private variable: the pattern, widened to 64 bits by zero or
// sign extension, or 64 bits of it.
[[gnu::always_inline]] inline bool is_private_pattern(uint64_t v) {
  const uint64_t high = v >> 32;
  return uint32_t(v) == kPrivatePattern && (high == 0 || high == 0xFFFFFFFFu || high == kPrivatePattern);
}

[[gnu::always_inline]] inline uint32_t bits_of(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// UBSan's descriptions of the conversion (the layout g++ emits for float-cast-overflow).
struct SourceLocation {
  const char* file;
  uint32_t line, column;
};
struct TypeDescriptor {
  uint16_t kind;  // 0: integer, 1: float, 0xffff: other (g++ says so for _Float16)
  uint16_t info;  // integer: log2(bits) << 1 | signed; float: bits
  char name[1];
};
struct FloatCastOverflowData {
  SourceLocation location;
  const TypeDescriptor* from;
  const TypeDescriptor* to;
};
struct OutOfBoundsData {
  SourceLocation location;
  const TypeDescriptor* array;
  const TypeDescriptor* index;
};

}  // namespace mtlsim::hooks

#define MTLSIM_HOOK extern "C" inline __attribute__((used, visibility("hidden"), no_sanitize_coverage))

MTLSIM_HOOK void __sanitizer_cov_trace_cmpf(float a, float b) {
  using mtlsim::hooks::bits_of, mtlsim::hooks::kPrivatePattern;
  if (__builtin_expect(bits_of(a) == kPrivatePattern || bits_of(b) == kPrivatePattern, 0)) {
    const bool first = bits_of(a) == kPrivatePattern;
    mtlsim_poison_compared(kPrivatePattern, bits_of(first ? b : a), __builtin_return_address(0));
  } else if (__builtin_expect(a != a || b != b, 0)) {
    const bool first = a != a;
    mtlsim_poison_compared(mtlsim::hooks::bits_of(first ? a : b), mtlsim::hooks::bits_of(first ? b : a),
                           __builtin_return_address(0));
  }
}
// A float promoted to double keeps its NaN payload in the top bits.
MTLSIM_HOOK void __sanitizer_cov_trace_cmpd(double a, double b) {
  if (__builtin_expect(a != a || b != b, 0)) {
    const bool first = a != a;
    mtlsim_poison_compared(mtlsim::hooks::bits_of(float(first ? a : b)), mtlsim::hooks::bits_of(float(first ? b : a)),
                           __builtin_return_address(0));
  }
}
#define MTLSIM_HOOK_INT(n, T)                                                                         \
  MTLSIM_HOOK void __sanitizer_cov_trace_cmp##n(T a, T b) {                                           \
    using mtlsim::hooks::is_private_pattern;                                                          \
    if (__builtin_expect(a == mtlsim::hooks::kIntPoison || b == mtlsim::hooks::kIntPoison, 0))        \
      mtlsim_poison_compared(mtlsim::hooks::kIntPoison, uint32_t(a == mtlsim::hooks::kIntPoison ? b : a), \
                             __builtin_return_address(0));                                            \
    else if (__builtin_expect(is_private_pattern(a) || is_private_pattern(b), 0))                     \
      mtlsim_poison_compared(mtlsim::hooks::kPrivatePattern, uint32_t(is_private_pattern(a) ? b : a),  \
                             __builtin_return_address(0));                                            \
  }                                                                                                   \
  MTLSIM_HOOK void __sanitizer_cov_trace_const_cmp##n(T a, T b) {                                     \
    if (__builtin_expect(b == mtlsim::hooks::kIntPoison, 0))                                          \
      mtlsim_poison_compared(mtlsim::hooks::kIntPoison, uint32_t(a), __builtin_return_address(0));    \
    else if (__builtin_expect(mtlsim::hooks::is_private_pattern(a) || mtlsim::hooks::is_private_pattern(b), 0)) \
      mtlsim_poison_compared(mtlsim::hooks::kPrivatePattern, 0, __builtin_return_address(0));          \
  }
MTLSIM_HOOK_INT(4, uint32_t)
MTLSIM_HOOK_INT(8, uint64_t)
#undef MTLSIM_HOOK_INT
// Bytes and shorts cannot hold the 32-bit pattern.
MTLSIM_HOOK void __sanitizer_cov_trace_cmp1(uint8_t, uint8_t) {}
MTLSIM_HOOK void __sanitizer_cov_trace_const_cmp1(uint8_t, uint8_t) {}
MTLSIM_HOOK void __sanitizer_cov_trace_cmp2(uint16_t, uint16_t) {}
MTLSIM_HOOK void __sanitizer_cov_trace_const_cmp2(uint16_t, uint16_t) {}
// cases[0]: how many case values follow cases[2]; the switched value decides like a comparison.
MTLSIM_HOOK void __sanitizer_cov_trace_switch(uint64_t value, uint64_t*) {
  if (__builtin_expect(value == mtlsim::hooks::kIntPoison, 0))
    mtlsim_poison_compared(mtlsim::hooks::kIntPoison, 0, __builtin_return_address(0));
  else if (__builtin_expect(mtlsim::hooks::is_private_pattern(value), 0))
    mtlsim_poison_compared(mtlsim::hooks::kPrivatePattern, 0, __builtin_return_address(0));
}

// The value sits in the handle's low bytes (floats up to 64 bits are passed inline).
MTLSIM_HOOK void __ubsan_handle_float_cast_overflow(mtlsim::hooks::FloatCastOverflowData* data, uintptr_t value) {
  const uint32_t float_bits = data->from->info;
  uint32_t bits = uint32_t(value);
  if (float_bits == 64) {
    double d;
    std::memcpy(&d, &value, sizeof d);
    bits = mtlsim::hooks::bits_of(float(d));
  }
  if (float_bits == 16) bits &= 0xffffu;
  const uint16_t to = data->to->kind == 0 ? data->to->info : 0;
  mtlsim_poison_converted(bits, float_bits == 64 ? 32 : float_bits, 1u << (to >> 1), to & 1, __builtin_return_address(0));
}

// The index sits in the handle as an integer of the index type's width.
MTLSIM_HOOK void __ubsan_handle_out_of_bounds(mtlsim::hooks::OutOfBoundsData* data, uintptr_t index) {
  const uint16_t info = data->index->kind == 0 ? data->index->info : 0;
  const uint32_t bits = 1u << (info >> 1);
  int64_t value = int64_t(index);
  if ((info & 1) && bits < 64) value = int64_t(index << (64 - bits)) >> (64 - bits);  // sign-extend
  mtlsim_array_out_of_bounds(int(data->location.line), value, data->array->name, __builtin_return_address(0));
}
MTLSIM_HOOK void __ubsan_handle_out_of_bounds_abort(mtlsim::hooks::OutOfBoundsData* data, uintptr_t index) {
  __ubsan_handle_out_of_bounds(data, index);
}
#undef MTLSIM_HOOK
