// Entry points of the compiler instrumentation that lets the simulator see where poison (the NaN
// patterns of never-written threadgroup memory, mtlsim/runtime.h) decides something:
//   -fsanitize-coverage=trace-cmp      calls __sanitizer_cov_trace_cmp* before every comparison
//                                      (and switch) with its operands;
//   -fsanitize=float-cast-overflow     calls __ubsan_handle_float_cast_overflow when a float
//                                      converted to an integer is out of range, NaN included.
// Verify compiles every TU of a module with both flags and force-includes this header
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
}

namespace mtlsim::hooks {

inline constexpr uint32_t kIntPoison = 0x7FC0DEADu;  // mtlsim::poison_bits_f32() read as an integer

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

}  // namespace mtlsim::hooks

#define MTLSIM_HOOK extern "C" inline __attribute__((used, visibility("hidden"), no_sanitize_coverage))

MTLSIM_HOOK void __sanitizer_cov_trace_cmpf(float a, float b) {
  if (__builtin_expect(a != a || b != b, 0)) {
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
    if (__builtin_expect(a == mtlsim::hooks::kIntPoison || b == mtlsim::hooks::kIntPoison, 0))        \
      mtlsim_poison_compared(mtlsim::hooks::kIntPoison, uint32_t(a == mtlsim::hooks::kIntPoison ? b : a), \
                             __builtin_return_address(0));                                            \
  }                                                                                                   \
  MTLSIM_HOOK void __sanitizer_cov_trace_const_cmp##n(T a, T b) {                                     \
    if (__builtin_expect(b == mtlsim::hooks::kIntPoison, 0))                                          \
      mtlsim_poison_compared(mtlsim::hooks::kIntPoison, uint32_t(a), __builtin_return_address(0));    \
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
#undef MTLSIM_HOOK
