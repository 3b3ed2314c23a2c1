// The nvfp4 specs' E2M1 decode (bit operations since the per-lane `constant` table went, issue 29)
// against the format's table, code by code, in the simulator copies of the committed out/ files:
// verify's sums could hide one wrong code among sixteen, this cannot.
#include <gtest/gtest.h>

#include <bit>
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

// Bit for bit, so that code 8 must give -0.0 and not 0.0.
void expect_table(float (*decode)(uint32_t), const char* spec) {
  for (uint32_t code = 0; code < 16; ++code)
    EXPECT_EQ(std::bit_cast<uint32_t>(decode(code)), std::bit_cast<uint32_t>(kE2M1[code]))
        << spec << ": code " << code << " decodes to " << decode(code) << ", the table says " << kE2M1[code];
}

TEST(Nvfp4Decode, EveryE2M1CodeIsTheTablesValue) {
  expect_table(nvfp4_matvec_msl::e2m1_to_float, "nvfp4_matvec");
  expect_table(nvfp4_qkv_matvec_msl::e2m1_to_float, "nvfp4_qkv_matvec");
  expect_table(nvfp4_gate_up_matvec_msl::e2m1_to_float, "nvfp4_gate_up_matvec");
}

}  // namespace
