// Scalar and vector types and math of the shim, outside any dispatch.
#include <cmath>
#include <cstring>
#include <limits>

#include "sim_test_util.h"
// clang-format off
#include <kernels/types.metal>  // the simulator copy (see mtlsim_prepare_msl)
// clang-format on

namespace {

uint16_t bits(bfloat b) { return b.bits; }
uint16_t bits(half h) { return std::bit_cast<uint16_t>(h); }
float from_bits(uint32_t u) { return std::bit_cast<float>(u); }

TEST(Bfloat, RoundsToNearestEven) {
  EXPECT_EQ(bits(bfloat(1.0f)), 0x3f80);
  EXPECT_EQ(bits(bfloat(from_bits(0x3f808000))), 0x3f80);  // tie, even stays
  EXPECT_EQ(bits(bfloat(from_bits(0x3f818000))), 0x3f82);  // tie, odd rounds up to even
  EXPECT_EQ(bits(bfloat(from_bits(0x3f808001))), 0x3f81);  // above the tie
  EXPECT_EQ(bits(bfloat(from_bits(0x3f807fff))), 0x3f80);  // below the tie
  EXPECT_EQ(bits(bfloat(from_bits(0xbf818000))), 0xbf82);  // negative tie
  EXPECT_EQ(bits(bfloat(from_bits(0x7f7fffff))), 0x7f80);  // FLT_MAX rounds to inf
  EXPECT_EQ(bits(bfloat(INFINITY)), 0x7f80);
  EXPECT_EQ(bits(bfloat(-INFINITY)), 0xff80);
  EXPECT_EQ(bits(bfloat(from_bits(0x00000001))), 0x0000);  // tiny denormal
}

TEST(Bfloat, NaNStaysNaN) {
  for (uint32_t nan : {0x7fc00000u, 0x7f800001u, 0xffc00001u, 0x7fffffffu, 0x7f80ffffu}) {
    const bfloat b = bfloat(from_bits(nan));
    EXPECT_TRUE(std::isnan(float(b))) << std::hex << nan;
    EXPECT_EQ(bits(b) & 0x8000, (nan >> 16) & 0x8000);
  }
}

TEST(Bfloat, ArithmeticAndConversions) {
  const bfloat a = 1.5f, b = 2;
  EXPECT_EQ(float(a + b), 3.5f);
  EXPECT_EQ(float(a * b), 3.0f);
  EXPECT_EQ(float(-a), -1.5f);
  EXPECT_EQ(int(bfloat(7.9f)), 7);
  EXPECT_TRUE(a < b && b == 2.0f && 1 < a);
  static_assert(std::is_same_v<decltype(a + b), bfloat>);
  static_assert(std::is_same_v<decltype(a + 1.0f), float>);
  bfloat c = 1.0f;
  c += 1.0f / 256;  // below half an ulp of 1.0 in bfloat
  EXPECT_EQ(float(c), 1.0f);
  EXPECT_EQ(dot_bf16(bfloat4(1, 2, 3, 4), bfloat4(0.5f)), 5.0f);
}

TEST(Half, EveryBitPatternRoundTripsThroughFloat) {
  for (uint32_t u = 0; u < 0x10000; ++u) {
    const half h = std::bit_cast<half>(uint16_t(u));
    const float f = float(h);
    if (std::isnan(f)) continue;
    EXPECT_EQ(bits(half(f)), u) << std::hex << u;
  }
  static_assert(sizeof(half) == 2 && sizeof(half4) == 8 && sizeof(float3) == 16 && alignof(float4) == 16);
}

TEST(Half, RoundsToNearestEvenFromFloat) {
  EXPECT_EQ(bits(half(1.0f + 1.0f / 2048)), 0x3c00);          // tie to even
  EXPECT_EQ(bits(half(1.0f + 3.0f / 2048)), 0x3c02);          // tie to even (up)
  EXPECT_EQ(bits(half(65520.0f)), 0x7c00);                    // overflows to inf
  EXPECT_EQ(float(half_literals(3.0h)), 2.5f);
  EXPECT_EQ(float(metal::numeric_limits<half>::max()), 65504.0f);
  EXPECT_EQ(float(metal::numeric_limits<half>::epsilon()), 1.0f / 1024);
}

TEST(Vectors, ConstructionAccessAndOperators) {
  const float2 xy(1.0f, 2.0f);
  float4 v(xy, 3.0f, 4.0f);
  EXPECT_EQ(v.x + v.y + v.z + v.w, 10.0f);
  EXPECT_EQ(v[3], 4.0f);
  v += 1.0f;
  v = v * float4(2.0f) - 1;
  EXPECT_EQ(v.w, 9.0f);
  EXPECT_TRUE(all(v > 0.0f));
  EXPECT_FALSE(any(v == 4.0f));
  const uint4 u = uint4(v);
  EXPECT_EQ(u.y, 5u);
  EXPECT_EQ((u >> 1u).z, 3u);
  const int3 r = int_vector_ops(int3(1, -5, 7));
  EXPECT_EQ(r.x, 1);
  EXPECT_EQ(r.y, 11);
  EXPECT_EQ(r.z, 1);
  packed_float4 p = float4(1.0f);
  EXPECT_EQ(p.r, 1.0f);
}

TEST(Math, MslIdiomsCompileAndCompute) {
  constant Params params{4, 0.25f};
  const float4 f = mixed_precision(half4(half(4.0f), half(1.0f), half(7.0f), half(-2.0f)), params);
  EXPECT_FLOAT_EQ(f.x, std::sqrt(4.25f));
  EXPECT_EQ(f.y, 1.0f);
  EXPECT_EQ(f.z, 1.0f);
  EXPECT_EQ(f.w, 0.25f);
  EXPECT_EQ(bits_roundtrip(-0.0f), 0x80000000u);
  const uint16_t block = 0x3A;  // low nibble 10, high nibble 3
  const half2 q = unpack_q4_pair(&block, half(0.5f));
  EXPECT_EQ(float(q.x), 1.0f);
  EXPECT_EQ(float(q.y), -2.5f);
  EXPECT_EQ(limits_sum(), 65504.0f - 3.3895314e38f + std::numeric_limits<float>::epsilon());
}

TEST(Math, ScalarSemantics) {
  using namespace metal;
  const float nan = NAN;
  EXPECT_EQ(max(nan, 1.0f), 1.0f);  // fmax semantics
  EXPECT_EQ(min(2.0f, nan), 2.0f);
  EXPECT_EQ(max(3, 7u), 7u);
  EXPECT_EQ(max(half(1.0f), 2.0f), 2.0f);
  EXPECT_EQ(clamp(5, 0, 3), 3);
  EXPECT_EQ(sign(-0.0f), -0.0f);
  EXPECT_EQ(sign(-3.0f), -1.0f);
  EXPECT_EQ(select(1.0f, 2.0f, true), 2.0f);
  EXPECT_EQ(fract(-0.25f), 0.75f);
  EXPECT_EQ(step(1.0f, 0.5f), 0.0f);
  EXPECT_EQ(mix(2.0f, 4.0f, 0.25f), 2.5f);
  EXPECT_EQ(fma(2.0f, 3.0f, 1.0f), 7.0f);
  EXPECT_EQ(rsqrt(4.0f), 0.5f);
  EXPECT_EQ(float(exp2(half(3.0f))), 8.0f);
  EXPECT_EQ(popcount(0xF0u), 4u);
  EXPECT_EQ(clz(1u), 31u);
  EXPECT_EQ(ctz(8), 3);
  EXPECT_TRUE(isnan(nan) && isinf(INFINITY) && isfinite(1.0f) && !isfinite(nan));
  EXPECT_EQ(abs(-3), 3);
  EXPECT_EQ(copysign(2.0f, -1.0f), -2.0f);
  EXPECT_EQ(fmod(7.0f, 4.0f), 3.0f);
}

TEST(Math, VectorForms) {
  using namespace metal;
  const float3 a(3.0f, 0.0f, 4.0f);
  EXPECT_EQ(length(a), 5.0f);
  EXPECT_EQ(dot(a, a), 25.0f);
  EXPECT_EQ(normalize(a).z, 0.8f);
  EXPECT_EQ(cross(float3(1, 0, 0), float3(0, 1, 0)).z, 1.0f);
  const float4 m = max(float4(1, -2, NAN, 4), 0.0f);
  EXPECT_EQ(m.y, 0.0f);
  EXPECT_EQ(m.z, 0.0f);
  const bool4 n = isnan(float4(NAN, 1, 2, 3));
  EXPECT_TRUE(n.x && !n.y);
  const half4 e = exp(half4(half(0.0f)));
  EXPECT_EQ(float(e.w), 1.0f);
  const uint2 bitsv = as_type<uint2>(float2(1.0f, -2.0f));
  EXPECT_EQ(bitsv.x, 0x3f800000u);
  EXPECT_EQ(select(int2(1, 2), int2(3, 4), bool2(true, false)).x, 3);
}

}  // namespace
