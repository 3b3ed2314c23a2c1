// Apple's standard-library surface as the MSL specification states it (headers in any order,
// limits, matrices, simdgroup matrices, mixed-operand overloads, integer functions, the __metal_*
// builtins). stdlib_surface_test.cpp checks each kernel against values worked out by hand or a
// serial product.
#include <metal_simdgroup_matrix>
#include <metal_math>
#include <metal_integer>
#include <metal_limits>
#include <metal_common>
#include <metal_stdlib>
using namespace metal;

#if !defined(__METAL__) || __METAL_VERSION__ < 230
#error "__METAL__ and __METAL_VERSION__ are predefined"
#endif

static_assert(sizeof(float3x3) == 48 && sizeof(half2x2) == 8 && sizeof(float4x2) == 32);
static_assert(is_same_v<decltype(float2x3()[0]), float3&>);
static_assert(numeric_limits<int>::max() == INT_MAX && numeric_limits<uint>::max() == UINT_MAX);
static_assert(numeric_limits<float>::max() == MAXFLOAT && CHAR_BIT == 8);
static_assert(is_floating_point_v<bfloat> && is_same_v<remove_addrspace_t<const device float>, const float>);

METAL_FUNC float twice(float x) { return 2.0f * x; }
template <typename T>
constexpr constant bool is_small_int = _disjunction<is_same<T, short>, is_same<T, char>>::value;
static_assert(is_small_int<short> && !is_small_int<int>);
constexpr const uniform<int> four = make_uniform(4);

// out[0..15]: limits of half and bfloat, as floats.
[[kernel]] void limits(device float* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  if (gid != 0) return;
  out[0] = float(MAXHALF);
  out[1] = float(HALF_MIN);
  out[2] = float(HALF_EPSILON);
  out[3] = float(numeric_limits<half>::max());
  out[4] = float(numeric_limits<half>::lowest());
  out[5] = float(numeric_limits<half>::denorm_min());
  out[6] = float(numeric_limits<bfloat>::max());
  out[7] = float(numeric_limits<bfloat>::epsilon());
  out[8] = isinf(numeric_limits<half>::infinity()) ? 1.0f : 0.0f;
  out[9] = isnan(numeric_limits<bfloat>::quiet_NaN()) ? 1.0f : 0.0f;
  out[10] = FLT_EPSILON;
  out[11] = float(M_PI_H);
  out[12] = M_SQRT1_2_F;
  out[13] = float(HALF_MAX_EXP + HALF_MANT_DIG);
  out[14] = twice(float(numeric_limits<half>::digits));
  out[15] = float(__METAL_VERSION__);
}

// Column-major matrices: out gets m * v, v * m, (a * b)[1], transpose, determinant, a + b.
[[kernel]] void matrices(device float* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  if (gid != 0) return;
  const float2x3 m(float3(1, 2, 3), float3(4, 5, 6));  // 2 columns, 3 rows
  const float3 mv = m * float2(1, 10);                 // (41, 52, 63)
  const float2 vm = float3(1, 1, 1) * m;               // (6, 15)
  const float2x2 a(1, 2, 3, 4);                        // columns (1, 2), (3, 4)
  const float2x2 b(float2(0, 1), float2(1, 0));
  const float2x2 ab = a * b;                           // columns (3, 4), (1, 2)
  const float3x2 t = transpose(m);                     // columns (1, 4), (2, 5), (3, 6)
  float2x2 s = a + b;
  s *= 2.0f;
  s[1].y = -1.0f;
  const half2x2 h(2.0h);
  int k = 0;
  for (int i = 0; i < 3; ++i) out[k++] = mv[i];
  for (int i = 0; i < 2; ++i) out[k++] = vm[i];
  for (int i = 0; i < 2; ++i) out[k++] = ab[1][i];
  for (int i = 0; i < 2; ++i) out[k++] = t[2][i];
  out[k++] = determinant(a);
  out[k++] = determinant(float3x3(2.0f));
  for (int c = 0; c < 2; ++c)
    for (int r = 0; r < 2; ++r) out[k++] = s[c][r];
  out[k++] = float(h[0][0] + h[0][1] + h[1][1]);
}

// One simdgroup: d = a * b + c for 8x8 row-major a, b, c in device memory (b read transposed
// from bt), then d stored; each lane also writes the (row, column) pairs it holds.
[[kernel]] void simdgroup_mma(const device float* a [[buffer(0)]],
                              const device float* bt [[buffer(1)]],
                              const device half* c [[buffer(2)]],
                              device float* d [[buffer(3)]],
                              device float* owned [[buffer(4)]],
                              ushort lane [[thread_index_in_simdgroup]]) {
  simdgroup_float8x8 ma, mb, md;
  simdgroup_half8x8 mc;
  simdgroup_load(ma, a);
  simdgroup_load(mb, bt, 8, ulong2(0, 0), true);
  simdgroup_load(mc, c, 16, ulong2(8, 0));  // columns 8..15 of a 16-wide array
  simdgroup_multiply_accumulate(md, ma, mb, mc);
  simdgroup_store(md, d);
  // thread_elements: mark the elements this lane holds in a matrix of lane ids.
  simdgroup_float8x8 ids = make_filled_simdgroup_matrix<float, 8>(0.0f);
  ids.thread_elements()[0] = float(lane);
  ids.thread_elements()[1] = float(lane) + 0.5f;
  simdgroup_store(ids, owned);
}

// simdgroup_multiply with the identity: d = a * I, stored transposed at an origin.
[[kernel]] void simdgroup_identity(const device float* a [[buffer(0)]], device float* d [[buffer(1)]]) {
  simdgroup_float8x8 ma, md;
  simdgroup_load(ma, a);
  simdgroup_multiply(md, ma, simdgroup_float8x8(1.0f));
  md = md * simdgroup_float8x8(1.0f);  // operator*: a second product with the identity
  simdgroup_store(md, d, 10, ulong2(2, 1), true);
}

// Overloads real kernels call: out[0..] as listed in the test.
[[kernel]] void overloads(device float* out [[buffer(0)]], device int* iout [[buffer(1)]],
                          uint gid [[thread_position_in_grid]]) {
  if (gid != 0) return;
  int k = 0;
  const float4 v = fmax(0, float4(-1, 2, -3, 4));  // scalar first
  const float4 w = min(1.0f, float4(-1, 2, -3, 4));
  out[k++] = v.x + v.y + v.z + v.w;   // 6
  out[k++] = w.x + w.y + w.z + w.w;   // -2
  out[k++] = fmax3(1.0f, 5.0f, 3.0f); // 5
  out[k++] = median3(1.0f, 5.0f, 3.0f); // 3
  out[k++] = float(fmin3(half(2), half(-1), half(0)));  // -1
  int e = 0;
  out[k++] = frexp(12.0f, e);          // 0.75
  out[k++] = float(e);                 // 4
  out[k++] = ldexp(0.75f, 4);          // 12
  out[k++] = sinpi(0.5f);              // 1
  out[k++] = float(nextafter(half(1), half(2)) - half(1));  // 2^-10
  out[k++] = __metal_fmax(2.0f, 7.0f, __METAL_FAST_MATH__);     // 7
  out[k++] = __metal_fma(2.0f, 3.0f, 1.0f, __METAL_PRECISE_MATH__);  // 7
  out[k++] = float(__metal_get_simdgroup_size(ushort()));  // 32
  out[k++] = float(bfloat(abs(bfloat(-2.5f))));            // 2.5
  out[k++] = copysign(bfloat(2.0f), -1.0f);                // -2 (bfloat meets float at float)
  const uint4 braced = {7u, 8u, 9u};                       // w is zero
  out[k++] = float(braced.x + braced.y + braced.z + braced.w) + float(four);  // 28
  int j = 0;
  iout[j++] = absdiff(3, -4);                  // 7
  iout[j++] = addsat(INT_MAX, 5) == INT_MAX;   // 1
  iout[j++] = int(subsat(2u, 5u));             // 0
  iout[j++] = hadd(7, 8);                      // 7
  iout[j++] = rhadd(7, 8);                     // 8
  iout[j++] = int(mulhi(0x80000000u, 4u));     // 2
  iout[j++] = int(rotate(0x80000001u, 1u));    // 3
  iout[j++] = int(reverse_bits(uchar(1)));     // 128
  iout[j++] = extract_bits(int(0xf0), 4u, 4u); // -1 (sign-extended)
  iout[j++] = int(extract_bits(0xf0u, 4u, 4u)); // 15
  iout[j++] = int(insert_bits(0u, 5u, 8u, 4u)); // 0x500
  iout[j++] = int(pack_float_to_unorm4x8(float4(0, 1, 0.5f, 1)));
  iout[j++] = popcount(uint2(3, 7)).y;         // 3
}

// Unsuffixed literals make double expressions; a class converting to bool converts on to bfloat.
struct always_on {
  constexpr operator bool() const { return true; }
};
[[kernel]] void doubles(device float* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  if (gid != 0) return;
  const float v = 100.0f;
  out[0] = floor(v * 0.0625);            // 6
  out[1] = sqrt(2.25);                   // 1.5
  out[2] = float(bfloat(always_on()));   // 1
}

// Half the simdgroup stores its matrix from one line, half from another: simd divergence.
[[kernel]] void divergent_matrix_store(device float* out [[buffer(0)]], ushort lane [[thread_index_in_simdgroup]]) {
  const simdgroup_float8x8 m = make_filled_simdgroup_matrix<float, 8>(1.0f);
  if (lane < 16) {
    simdgroup_store(m, out);  // MARK:store_a
  } else {
    simdgroup_store(m, out + 64);  // MARK:store_b
  }
}
