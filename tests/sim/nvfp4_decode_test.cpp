// The nvfp4 specs' E2M1 and E4M3 decodes (bit operations through half since the per-lane
// `constant` table went, issue 29) against the formats' tables, code by code, in the simulator
// copies of the committed out/ files: verify's sums could hide one wrong code among sixteen.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>

// Each generated file defines its own helpers, as Metal compiles each .metal alone: one namespace
// per file here.
#include <metal_stdlib>
// clang-format off
namespace nvfp4_matvec_msl {
#include <nvfp4_matvec/nvfp4_matvec.metal>
}
namespace nvfp4_qkv_matvec_msl {
#include <nvfp4_qkv_matvec/nvfp4_qkv_matvec.metal>
}
namespace nvfp4_gate_up_matvec_msl {
#include <nvfp4_gate_up_matvec/nvfp4_gate_up_matvec.metal>
}
// clang-format on

namespace {

// E2M1 as the OCP MX specification lists it: codes 0..7 the magnitudes, 8..15 their negatives.
constexpr float kE2M1[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                             -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

// Bit for bit, so that code 8 must give -0.0 and not 0.0: every code in both halves of a pair,
// beside every other code, times the 2^14 the pair decode leaves to the scale.
using PairDecode = metal::float2 (*)(uint32_t);
void expect_table(PairDecode decode, const char* spec) {
  for (uint32_t lo = 0; lo < 16; ++lo)
    for (uint32_t hi = 0; hi < 16; ++hi) {
      const metal::float2 pair = decode(lo | (hi << 16) | 0xFFF0FFF0u);  // bits above each code are ignored
      EXPECT_EQ(std::bit_cast<uint32_t>(pair.x * 16384.0f), std::bit_cast<uint32_t>(kE2M1[lo]))
          << spec << ": code " << lo << " (low half) decodes to " << pair.x * 16384.0f << ", the table says " << kE2M1[lo];
      EXPECT_EQ(std::bit_cast<uint32_t>(pair.y * 16384.0f), std::bit_cast<uint32_t>(kE2M1[hi]))
          << spec << ": code " << hi << " (high half) decodes to " << pair.y * 16384.0f << ", the table says " << kE2M1[hi];
    }
}

// E4M3 from its fields (OCP FP8 "FN": bias 7, exponent 0 subnormal, S.1111.111 NaN), times 2^14.
void expect_e4m3(float (*scale)(uint8_t), const char* spec) {
  for (uint32_t code = 0; code < 256; ++code) {
    const uint32_t e = (code >> 3) & 15u, m = code & 7u;
    const float magnitude = e == 0 ? std::ldexp(float(m), -9) : std::ldexp(1.0f + float(m) / 8.0f, int(e) - 7);
    const float got = scale(uint8_t(code)) / 16384.0f;
    if ((code & 0x7Fu) == 0x7Fu) {
      EXPECT_TRUE(std::isnan(got)) << spec << ": E4M3 code " << code << " must be NaN, is " << got;
      continue;
    }
    EXPECT_EQ(got, (code & 0x80u) ? -magnitude : magnitude) << spec << ": E4M3 code " << code;
  }
}

TEST(Nvfp4Decode, EveryE2M1CodeIsTheTablesValue) {
  expect_table(nvfp4_matvec_msl::e2m1_pair, "nvfp4_matvec");
  expect_table(nvfp4_qkv_matvec_msl::e2m1_pair, "nvfp4_qkv_matvec");
  expect_table(nvfp4_gate_up_matvec_msl::e2m1_pair, "nvfp4_gate_up_matvec");
}

TEST(Nvfp4Decode, EveryE4M3ScaleIsItsFieldsValue) {
  expect_e4m3(nvfp4_matvec_msl::e4m3_scale, "nvfp4_matvec");
  expect_e4m3(nvfp4_qkv_matvec_msl::e4m3_scale, "nvfp4_qkv_matvec");
  expect_e4m3(nvfp4_gate_up_matvec_msl::e4m3_scale, "nvfp4_gate_up_matvec");
}

}  // namespace
