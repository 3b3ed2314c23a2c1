// MSL's numeric-limit macros (spec section "Numeric Limits"): float ones come from <cfloat>
// (same values as Metal's), half ones and the M_*_H constants are spelled here. Integer limits
// (CHAR_BIT, INT_MAX, ...) come from <climits>, which the C++ library provides with Metal's values.
#pragma once
#pragma GCC system_header

#include <cfloat>
#include <climits>

#include "mtlsim/msl_scalar.h"

#ifndef MAXFLOAT
#define MAXFLOAT FLT_MAX
#endif
#ifndef HUGE_VALF
#define HUGE_VALF __builtin_huge_valf()
#endif
#ifndef INFINITY
#define INFINITY __builtin_inff()
#endif
#ifndef NAN
#define NAN __builtin_nanf("")
#endif

#define HALF_DIG 3
#define HALF_MANT_DIG 11
#define HALF_MAX_10_EXP 4
#define HALF_MAX_EXP 16
#define HALF_MIN_10_EXP -4
#define HALF_MIN_EXP -13
#define HALF_RADIX 2
#define HALF_MAX ((half)65504.0f)
#define HALF_MIN ((half)6.103515625e-05f)
#define HALF_EPSILON ((half)0.0009765625f)
#define MAXHALF HALF_MAX
#define HUGE_VALH ((half)__builtin_inff())

#define M_E_F 2.71828182845904523536f
#define M_LOG2E_F 1.44269504088896340736f
#define M_LOG10E_F 0.434294481903251827651f
#define M_LN2_F 0.693147180559945309417f
#define M_LN10_F 2.30258509299404568402f
#define M_PI_F 3.14159265358979323846f
#define M_PI_2_F 1.57079632679489661923f
#define M_PI_4_F 0.785398163397448309616f
#define M_1_PI_F 0.318309886183790671538f
#define M_2_PI_F 0.636619772367581343076f
#define M_2_SQRTPI_F 1.12837916709551257390f
#define M_SQRT2_F 1.41421356237309504880f
#define M_SQRT1_2_F 0.707106781186547524401f

#define M_E_H ((half)M_E_F)
#define M_LOG2E_H ((half)M_LOG2E_F)
#define M_LOG10E_H ((half)M_LOG10E_F)
#define M_LN2_H ((half)M_LN2_F)
#define M_LN10_H ((half)M_LN10_F)
#define M_PI_H ((half)M_PI_F)
#define M_PI_2_H ((half)M_PI_2_F)
#define M_PI_4_H ((half)M_PI_4_F)
#define M_1_PI_H ((half)M_1_PI_F)
#define M_2_PI_H ((half)M_2_PI_F)
#define M_2_SQRTPI_H ((half)M_2_SQRTPI_F)
#define M_SQRT2_H ((half)M_SQRT2_F)
#define M_SQRT1_2_H ((half)M_SQRT1_2_F)
