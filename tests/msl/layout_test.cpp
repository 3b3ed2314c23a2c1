// Metal layout of argument structs: 64-bit fields, packed vectors, 3-vectors, nested structs
// and arrays, as the host must fill them.
#include "msl_test_util.h"

namespace mtlgen::msl::testing {
namespace {

const FieldLayout& field(const std::vector<FieldLayout>& fields, const std::string& name) {
  for (const auto& f : fields)
    if (f.name == name) return f;
  throw std::runtime_error("no field " + name);
}

TEST(MslLayout, GgmlArgumentStructWith64BitFieldsAndVectors) {
  Parsed p = parse_input("ggml_style.metal");
  const KernelParam& args = param(entry(p.unit, "kernel_rms_norm"), "args");
  ASSERT_TRUE(args.layout);
  const StructLayout& l = *args.layout;
  EXPECT_EQ(l.name, "ggml_metal_kargs_norm");
  EXPECT_EQ(field(l.fields, "ne00").offset, 0u);
  EXPECT_EQ(field(l.fields, "ne01").offset, 8u);  // int64_t aligned to 8
  EXPECT_EQ(field(l.fields, "ne01").type, "int64_t");
  EXPECT_EQ(field(l.fields, "nb01").offset, 16u);
  EXPECT_EQ(field(l.fields, "nb01").size, 8u);
  EXPECT_EQ(field(l.fields, "eps").offset, 24u);
  EXPECT_EQ(field(l.fields, "ne02").offset, 28u);
  const FieldLayout& packed = field(l.fields, "scale3");
  EXPECT_EQ(packed.type, "packed_float3");
  EXPECT_EQ(packed.offset, 32u);
  EXPECT_EQ(packed.size, 12u);
  EXPECT_EQ(packed.align, 4u);
  const FieldLayout& vec3 = field(l.fields, "bias3");
  EXPECT_EQ(vec3.offset, 48u);  // 44 rounded up to float3's 16
  EXPECT_EQ(vec3.size, 16u);
  EXPECT_EQ(l.size, 64u);
  EXPECT_EQ(l.align, 16u);
}

TEST(MslLayout, QuantizedBlockStruct) {
  Parsed p = parse_input("ggml_style.metal");
  const KernelParam& x = param(entry(p.unit, "kernel_mul_mv_q4_0_f32"), "x");
  ASSERT_TRUE(x.layout);
  EXPECT_EQ(x.layout->size, 18u);
  EXPECT_EQ(x.layout->align, 2u);
  const FieldLayout& qs = field(x.layout->fields, "qs");
  EXPECT_EQ(qs.type, "uint8_t");
  EXPECT_EQ(qs.offset, 2u);
  EXPECT_EQ(qs.array_count, 16u);
  EXPECT_EQ(qs.size, 16u);
  EXPECT_EQ(field(x.layout->fields, "d").type, "half");
}

TEST(MslLayout, NestedStructsArraysAndPackedHalfVectors) {
  Parsed p = parse_text(R"(#include <metal_stdlib>
using namespace metal;
struct Inner { half3 h; char c; };
struct Outer { float a; Inner in; packed_half3 p; float m[2][3]; uint64_t tail; };
kernel void k(constant Outer& o [[buffer(0)]], device float* out [[buffer(1)]]) { out[0] = o.a; }
)");
  ASSERT_FALSE(p.diags.has_errors()) << p.diags.format_all();
  const StructLayout& l = *param(entry(p.unit, "k"), "o").layout;
  const FieldLayout& in = field(l.fields, "in");
  EXPECT_EQ(in.offset, 8u);  // Inner is aligned as half3: 8
  EXPECT_EQ(in.size, 16u);
  ASSERT_EQ(in.fields.size(), 2u);
  EXPECT_EQ(in.fields[0].size, 8u);  // half3: 8 bytes
  EXPECT_EQ(in.fields[1].offset, 8u);
  const FieldLayout& packed = field(l.fields, "p");
  EXPECT_EQ(packed.offset, 24u);
  EXPECT_EQ(packed.size, 6u);
  EXPECT_EQ(packed.align, 2u);
  const FieldLayout& m = field(l.fields, "m");
  EXPECT_EQ(m.offset, 32u);
  EXPECT_EQ(m.array_count, 6u);
  EXPECT_EQ(m.size, 24u);
  EXPECT_EQ(field(l.fields, "tail").offset, 56u);
  EXPECT_EQ(l.size, 64u);
  EXPECT_EQ(l.align, 8u);
}

}  // namespace
}  // namespace mtlgen::msl::testing
