// Exact emulation of Metal's 16-bit float types for the C++ references: conversions from float
// round to nearest, ties to even; conversions to float are exact; NaN and infinities survive.
// Arithmetic happens in float (an implicit conversion), as in `T(float(a) * float(b))`.
#pragma once

#include <cstdint>
#include <cstring>

namespace mtlgen {

namespace detail {

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// IEEE binary16 from binary32, round to nearest even (handles subnormals, overflow to inf, NaN).
inline uint16_t float_to_half_bits(float f) {
  uint32_t x = float_bits(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN (keep NaN quiet and non-zero)
    return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x0200u | ((abs >> 13) & 0x3ffu) : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past 65504
  if (abs < 0x38800000u) {  // below the smallest normal half: a subnormal or zero
    if (abs < 0x33000000u) return sign;  // below half of the smallest subnormal
    uint32_t mantissa = (abs & 0x007fffffu) | 0x00800000u;
    int shift = 126 - static_cast<int>(abs >> 23);  // to units of 2^-24, the subnormal step
    uint32_t value = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1u);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (value & 1u))) ++value;
    return static_cast<uint16_t>(sign | value);
  }
  uint32_t rounded = abs + 0x0fffu + ((abs >> 13) & 1u);  // ties to even on bit 13
  return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

inline float half_bits_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1fu) return bits_float(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    float value = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return sign ? -value : value;
  }
  return bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

inline uint16_t float_to_bfloat_bits(float f) {
  uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x0040u);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1u);  // ties to even
  return static_cast<uint16_t>(x >> 16);
}

inline float bfloat_bits_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }

}  // namespace detail

// A 16-bit storage type that computes in float.
template <uint16_t (*FromFloat)(float), float (*ToFloat)(uint16_t)>
class float16_storage {
 public:
  float16_storage() = default;
  explicit float16_storage(float f) : bits_(FromFloat(f)) {}
  explicit float16_storage(double d) : bits_(FromFloat(static_cast<float>(d))) {}
  explicit float16_storage(int i) : bits_(FromFloat(static_cast<float>(i))) {}
  operator float() const { return ToFloat(bits_); }

  static float16_storage from_bits(uint16_t bits) {
    float16_storage s;
    s.bits_ = bits;
    return s;
  }
  uint16_t bits() const { return bits_; }

 private:
  uint16_t bits_ = 0;
};

using half = float16_storage<detail::float_to_half_bits, detail::half_bits_to_float>;
using bfloat = float16_storage<detail::float_to_bfloat_bits, detail::bfloat_bits_to_float>;

static_assert(sizeof(half) == 2 && sizeof(bfloat) == 2, "16-bit types must be 2 bytes, as in Metal buffers");

}  // namespace mtlgen
