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
