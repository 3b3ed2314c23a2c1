// MSL scalar types: uint/ushort/uchar/ulong, half (_Float16, a real 2-byte type, because
// kernels read packed blocks through uint16_t*), bfloat (round-to-nearest-even from float),
// the traits the rest of the shim dispatches on, and metal::numeric_limits.
#pragma once
#pragma GCC system_header  // the shim is compiled with user flags; keep its internals quiet

#include <bit>
#include <cstdint>
#include <limits>
#include <type_traits>

typedef unsigned int uint;
typedef unsigned short ushort;
typedef unsigned char uchar;
typedef unsigned long ulong;
typedef _Float16 half;

namespace metal {

// bfloat16: the top half of a float. Arithmetic runs in float and rounds back, which is what
// MSL specifies for bfloat (no native bfloat ALU ops).
struct bfloat {
  uint16_t bits;

  bfloat() = default;
  template <class S>
    requires(std::is_arithmetic_v<S> || std::is_same_v<S, _Float16>)
  constexpr bfloat(S s) : bits(from_float(static_cast<float>(s))) {}
  // A class that converts to a scalar (MLX's mask types convert to bool): through that scalar.
  template <class S>
    requires(!(std::is_arithmetic_v<S> || std::is_same_v<S, _Float16> || std::is_same_v<S, bfloat>) &&
             std::is_convertible_v<const S&, float>)
  explicit constexpr bfloat(const S& s) : bits(from_float(static_cast<float>(s))) {}
  constexpr operator float() const { return std::bit_cast<float>(uint32_t(bits) << 16); }

  static constexpr bfloat from_bits(uint16_t b) {
    bfloat r;
    r.bits = b;
    return r;
  }
  // Round to nearest, ties to even; NaN stays NaN (quieted, sign and top payload kept).
  static constexpr uint16_t from_float(float f) {
    uint32_t u = std::bit_cast<uint32_t>(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x0040u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return uint16_t(u >> 16);
  }
};

template <class T>
inline constexpr bool is_msl_float_v =
    std::is_same_v<T, float> || std::is_same_v<T, _Float16> || std::is_same_v<T, bfloat>;
template <class T>
inline constexpr bool is_msl_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <class T>
inline constexpr bool is_msl_scalar_v =
    std::is_arithmetic_v<T> || std::is_same_v<T, _Float16> || std::is_same_v<T, bfloat>;

template <class T>
concept msl_scalar = is_msl_scalar_v<T>;
template <class T>
concept msl_float = is_msl_float_v<T>;

// bfloat with bfloat stays bfloat; with a floating scalar it widens to float (as in MSL);
// with an integer it stays bfloat (like half).
template <class S>
concept bf_other = msl_scalar<S> && !std::is_same_v<S, bfloat>;
template <class S>
using bf_result_t = std::conditional_t<std::is_integral_v<S>, bfloat, float>;

#define MTLSIM_BF_ARITH(op)                                                           \
  constexpr bfloat operator op(bfloat a, bfloat b) { return bfloat(float(a) op float(b)); } \
  template <bf_other S>                                                               \
  constexpr bf_result_t<S> operator op(bfloat a, S b) {                               \
    return bf_result_t<S>(float(a) op float(b));                                      \
  }                                                                                   \
  template <bf_other S>                                                               \
  constexpr bf_result_t<S> operator op(S a, bfloat b) {                               \
    return bf_result_t<S>(float(a) op float(b));                                      \
  }                                                                                   \
  template <msl_scalar S>                                                             \
  constexpr bfloat& operator op##=(bfloat & a, S b) {                                 \
    return a = bfloat(float(a) op float(b));                                          \
  }
MTLSIM_BF_ARITH(+)
MTLSIM_BF_ARITH(-)
MTLSIM_BF_ARITH(*)
MTLSIM_BF_ARITH(/)
#undef MTLSIM_BF_ARITH

#define MTLSIM_BF_CMP(op)                                                                   \
  constexpr bool operator op(bfloat a, bfloat b) { return float(a) op float(b); }            \
  template <bf_other S>                                                                      \
  constexpr bool operator op(bfloat a, S b) { return float(a) op float(b); }                 \
  template <bf_other S>                                                                      \
  constexpr bool operator op(S a, bfloat b) { return float(a) op float(b); }
MTLSIM_BF_CMP(==)
MTLSIM_BF_CMP(!=)
MTLSIM_BF_CMP(<)
MTLSIM_BF_CMP(<=)
MTLSIM_BF_CMP(>)
MTLSIM_BF_CMP(>=)
#undef MTLSIM_BF_CMP

constexpr bfloat operator-(bfloat a) { return bfloat::from_bits(uint16_t(a.bits ^ 0x8000u)); }
constexpr bfloat operator+(bfloat a) { return a; }
constexpr bfloat& operator++(bfloat& a) { return a += 1; }
constexpr bfloat& operator--(bfloat& a) { return a -= 1; }

// MSL's half literal suffixes (0.5h, 1H). Reserved-looking, hence the system_header pragma.
constexpr _Float16 operator""h(long double v) { return static_cast<_Float16>(v); }
constexpr _Float16 operator""h(unsigned long long v) { return static_cast<_Float16>(v); }
constexpr _Float16 operator""H(long double v) { return static_cast<_Float16>(v); }
constexpr _Float16 operator""H(unsigned long long v) { return static_cast<_Float16>(v); }

template <class T>
struct numeric_limits : std::numeric_limits<T> {};

template <>
struct numeric_limits<_Float16> {
  static constexpr bool is_specialized = true, is_signed = true, is_integer = false,
                        has_infinity = true, has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = true, has_denorm_loss = false, is_iec559 = true, is_bounded = true,
                        is_exact = false, is_modulo = false;
  static constexpr int digits = 11, digits10 = 3, max_digits10 = 5, radix = 2, min_exponent = -13,
                       min_exponent10 = -4, max_exponent = 16, max_exponent10 = 4;
  static constexpr _Float16 round_error() { return from(0x3800); }
  static constexpr _Float16 signaling_NaN() { return from(0x7d00); }
  static constexpr _Float16 from(uint16_t b) { return std::bit_cast<_Float16>(b); }
  static constexpr _Float16 max() { return from(0x7bff); }
  static constexpr _Float16 lowest() { return from(0xfbff); }
  static constexpr _Float16 min() { return from(0x0400); }
  static constexpr _Float16 denorm_min() { return from(0x0001); }
  static constexpr _Float16 epsilon() { return from(0x1400); }
  static constexpr _Float16 infinity() { return from(0x7c00); }
  static constexpr _Float16 quiet_NaN() { return from(0x7e00); }
};

template <>
struct numeric_limits<bfloat> {
  static constexpr bool is_specialized = true, is_signed = true, is_integer = false,
                        has_infinity = true, has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = true, is_bounded = true, is_exact = false, is_modulo = false;
  static constexpr int digits = 8, digits10 = 2, max_digits10 = 4, radix = 2, min_exponent = -125,
                       min_exponent10 = -37, max_exponent = 128, max_exponent10 = 38;
  static constexpr bfloat round_error() { return bfloat::from_bits(0x3f00); }
  static constexpr bfloat signaling_NaN() { return bfloat::from_bits(0x7fa0); }
  static constexpr bfloat max() { return bfloat::from_bits(0x7f7f); }
  static constexpr bfloat lowest() { return bfloat::from_bits(0xff7f); }
  static constexpr bfloat min() { return bfloat::from_bits(0x0080); }
  static constexpr bfloat denorm_min() { return bfloat::from_bits(0x0001); }
  static constexpr bfloat epsilon() { return bfloat::from_bits(0x3c00); }
  static constexpr bfloat infinity() { return bfloat::from_bits(0x7f80); }
  static constexpr bfloat quiet_NaN() { return bfloat::from_bits(0x7fc0); }
};

}  // namespace metal

using metal::bfloat;
