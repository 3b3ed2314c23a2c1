// Apple's standard headers that the CUDA shim supports, in an order Apple's metal_stdlib does not
// use, with the predefined words and limit macros (test cuda.shim_std_headers_compile).
#include <metal_simdgroup>
#include <metal_math>
#include <metal_integer>
#include <metal_limits>
#include <metal_atomic>
#include <metal_common>
#include <metal_compute>
#include <metal_geometric>
#include <metal_relational>
#include <metal_types>
#include <metal_type_traits>
#include <metal_numeric>
#include <metal_array>
#include <metal_utility>
#include <metal_stdlib>
using namespace metal;

#if !defined(__METAL__) || __METAL_VERSION__ < 230
#error "__METAL__ and __METAL_VERSION__ are predefined"
#endif

METAL_FUNC float scaled(float x) { return x * float(MAXHALF) * float(HALF_EPSILON); }

__global__ void probe(float* out) { out[0] = scaled(MAXFLOAT > 0.0f ? 1.0f : 0.0f); }

// MSL half literals, as the front end rewrites them (`0.1h` -> mtlcu::half_literal(0.1)): binary16
// bits rounded to nearest even, subnormals and overflow included, in constant expressions.
static_assert(mtlcu::half_bits(0.1) == 0x2E66);
static_assert(mtlcu::half_bits(1.0) == 0x3C00 && mtlcu::half_bits(0.0) == 0);
static_assert(mtlcu::half_bits(1.0 + 0x1p-10) == 0x3C01);
static_assert(mtlcu::half_bits(1.0 + 0x1p-11) == 0x3C00, "a tie rounds to the even mantissa");
static_assert(mtlcu::half_bits(1.0 + 3 * 0x1p-11) == 0x3C02, "a tie rounds to the even mantissa");
static_assert(mtlcu::half_bits(2.0 - 0x1p-12) == 0x4000, "a mantissa rounding up carries into the exponent");
static_assert(mtlcu::half_bits(65504.0) == 0x7BFF && mtlcu::half_bits(65520.0) == 0x7C00);
static_assert(mtlcu::half_bits(0x1p-24) == 0x0001 && mtlcu::half_bits(0x1p-25) == 0 && mtlcu::half_bits(3 * 0x1p-25) == 2);
static_assert(mtlcu::half_bits(0x1p-14) == 0x0400 && mtlcu::half_bits(0x1p-14 - 0x1p-25) == 0x0400);
constexpr half kHalfOne = mtlcu::half_literal(1);
__global__ void half_literals(half* out) { out[0] = kHalfOne; }
