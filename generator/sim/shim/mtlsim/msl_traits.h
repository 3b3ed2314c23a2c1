// MSL's <metal_type_traits> as far as kernels use it (MLX: is_same_v, conditional_t,
// enable_if_t, is_floating_point_v, is_integral_v, remove_cv_t, ...). Most are the standard
// traits; the numeric ones also know half and bfloat, which MSL counts as floating point (g++ 12's
// std::is_floating_point does not know _Float16).
#pragma once
#pragma GCC system_header

#include <type_traits>
#include <utility>

#include "mtlsim/msl_scalar.h"

namespace metal {

using std::bool_constant;
using std::false_type;
using std::integral_constant;
using std::true_type;

using std::conditional;
using std::conditional_t;
using std::decay;
using std::decay_t;
using std::enable_if;
using std::enable_if_t;
using std::is_same;
using std::is_same_v;
using std::make_signed;
using std::make_signed_t;
using std::make_unsigned;
using std::make_unsigned_t;
using std::remove_const;
using std::remove_const_t;
using std::remove_cv;
using std::remove_cv_t;
using std::remove_extent;
using std::remove_extent_t;
using std::remove_pointer;
using std::remove_pointer_t;
using std::remove_reference;
using std::remove_reference_t;
using std::remove_volatile;
using std::remove_volatile_t;

using std::declval;
using std::is_array_v;
using std::is_class_v;
using std::is_const_v;
using std::is_convertible;
using std::is_convertible_v;
using std::is_integral;
using std::is_integral_v;
using std::is_pointer_v;
using std::is_unsigned;
using std::is_unsigned_v;
using std::is_void_v;

template <class T>
struct is_floating_point
    : bool_constant<std::is_floating_point_v<T> || std::is_same_v<std::remove_cv_t<T>, _Float16> ||
                    std::is_same_v<std::remove_cv_t<T>, bfloat>> {};
template <class T>
inline constexpr bool is_floating_point_v = is_floating_point<T>::value;

template <class T>
struct is_arithmetic : bool_constant<std::is_integral_v<T> || is_floating_point_v<T>> {};
template <class T>
inline constexpr bool is_arithmetic_v = is_arithmetic<T>::value;

template <class T>
struct is_signed : bool_constant<std::is_signed_v<T> || is_floating_point_v<T>> {};
template <class T>
inline constexpr bool is_signed_v = is_signed<T>::value;

// Apple's own names for the logical traits (MLX's atomic.h uses _disjunction), and the standard ones.
using std::conjunction;
using std::conjunction_v;
using std::disjunction;
using std::disjunction_v;
using std::negation;
using std::negation_v;
template <class... B>
using _conjunction = std::conjunction<B...>;
template <class... B>
using _disjunction = std::disjunction<B...>;

// MSL: scalars are the arithmetic types (vectors are not).
template <class T>
struct is_scalar : is_arithmetic<T> {};
template <class T>
inline constexpr bool is_scalar_v = is_scalar<T>::value;

}  // namespace metal
