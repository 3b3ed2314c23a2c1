// Unit::loop_form(): which kernels get a loop form (issue 17 item 2) and why the others do not.
#include <fstream>
#include <sstream>

#include "msl_test_util.h"

namespace mtlgen::msl::testing {
namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const LoopFormKernel& kernel(const Parsed& p, const std::string& function) {
  const LoopFormKernel* k = p.unit.loop_form().find(function);
  if (!k) throw std::runtime_error("no loop-form entry for " + function);
  return *k;
}

// A kernel around `body`, with the usual builtins and a threadgroup array.
std::string kernel_text(const std::string& body, const std::string& helpers = "") {
  return "#include <metal_stdlib>\nusing namespace metal;\n" + helpers +
         "kernel void k(device float* out [[buffer(0)]], threadgroup float* tg [[threadgroup(0)]],\n"
         "              uint lid [[thread_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]],\n"
         "              uint sg [[simdgroup_index_in_threadgroup]]) {\n" + body + "}\n";
}

LoopFormKernel loop_form_of(const std::string& body, const std::string& helpers = "") {
  Parsed p = parse_text(kernel_text(body, helpers));
  EXPECT_EQ(p.diags.error_count(), 0) << p.diags.format_all();
  return kernel(p, "k");
}

TEST(LoopForm, TopLevelSyncPointsQualify) {
  LoopFormKernel k = loop_form_of(
      "  float v = out[lid];\n"
      "  v = simd_sum(v);\n"
      "  if (lane == 0) tg[sg] = v;\n"
      "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
      "  const float total = simd_max(tg[lane % 4]);\n"
      "  out[lid] = total + v;\n");
  EXPECT_EQ(k.refusal, "");
  EXPECT_EQ(k.loop_function, "mtlsim_loops_k");
}

TEST(LoopForm, SyncCallsInsideExpressionsGoToTemporaries) {
  Parsed p = parse_text(kernel_text("  float v = out[lid];\n  v += simd_sum(v);\n  out[lid] = 1.0f / simd_max(v) + v;\n"));
  ASSERT_EQ(p.diags.error_count(), 0) << p.diags.format_all();
  EXPECT_EQ(kernel(p, "k").refusal, "");
  const std::string& text = p.unit.loop_form().text;
  EXPECT_NE(text.find("auto mtlsim_s1 = ::mtlsim::loops::result<decltype(simd_sum(v))>();"), std::string::npos) << text;
  EXPECT_NE(text.find("v += mtlsim_s1;"), std::string::npos) << text;
  EXPECT_NE(text.find("out[lid] = 1.0f / mtlsim_s2 + v;"), std::string::npos) << text;
}

TEST(LoopForm, StaticCastIsNotAStaticLocal) {
  EXPECT_EQ(loop_form_of("  float v = static_cast<float>(lid);\n  v = simd_sum(v);\n  out[lid] = v;\n").refusal, "");
  EXPECT_NE(loop_form_of("  static float v = 0;\n  v = simd_sum(v);\n  out[lid] = v;\n").refusal.find("static local"),
            std::string::npos);
}

TEST(LoopForm, ReturnAfterTheLastSyncPointQualifies) {
  EXPECT_EQ(loop_form_of("  float v = simd_sum(out[lid]);\n  if (lid != 0) return;\n  out[0] = v;\n").refusal, "");
}

TEST(LoopForm, HelpersAreInlinedWithFreshNames) {
  const std::string helper =
      "template <uint N, typename T>\n"
      "T total(T value, threadgroup T* scratch, uint lane, uint sg) {\n"
      "  value = simd_sum(value);\n"
      "  if (lane == 0) scratch[sg] = value;\n"
      "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
      "  T x = lane < N ? scratch[lane] : T(0);\n"
      "  return simd_sum(x);\n"
      "}\n";
  Parsed p = parse_text(kernel_text("  float value = out[lid];\n  float s = total<4>(value, tg, lane, sg);\n  out[lid] = s;\n", helper));
  ASSERT_EQ(p.diags.error_count(), 0) << p.diags.format_all();
  EXPECT_EQ(kernel(p, "k").refusal, "");
  const std::string& text = p.unit.loop_form().text;
  EXPECT_NE(text.find("using mtlsim_h1_T = std::remove_cvref_t<float>;"), std::string::npos) << text;
  EXPECT_NE(text.find("constexpr uint mtlsim_h1_N = 4;"), std::string::npos) << text;
  EXPECT_NE(text.find("mtlsim_h1_value"), std::string::npos) << text;
  EXPECT_NE(text.find("#line 5\nsimd_sum(mtlsim_h1_value);"), std::string::npos) << "the helper's own lines: " << text;
  EXPECT_NE(text.find("#define MTLSIM_LOOPS_k 1"), std::string::npos);
}

struct Refused {
  const char* name;
  std::string body;
  std::string helpers;
  std::string why;  // a part of the refusal
  int line;
};

class LoopFormRefusal : public ::testing::TestWithParam<Refused> {};

TEST_P(LoopFormRefusal, FallsBackToFibersWithItsReason) {
  LoopFormKernel k = loop_form_of(GetParam().body, GetParam().helpers);
  EXPECT_EQ(k.loop_function, "");
  EXPECT_NE(k.refusal.find(GetParam().why), std::string::npos) << k.refusal;
  EXPECT_EQ(k.refusal_line, GetParam().line) << k.refusal;
}

// Lines: the kernel's body starts on line 6 (line 3 with one helper line before it).
INSTANTIATE_TEST_SUITE_P(
    Reasons, LoopFormRefusal,
    ::testing::Values(
        Refused{"BarrierInABranch", "  if (lid < 32) {\n    threadgroup_barrier(mem_flags::mem_none);\n  }\n", "",
                "inside a statement", 6},
        Refused{"SimdFunctionInALoop", "  float v = 0;\n  for (uint i = 0; i < 4; ++i) v += simd_sum(out[i]);\n  out[lid] = v;\n", "",
                "inside a statement", 7},
        Refused{"SimdFunctionEvaluatedConditionally", "  float v = lid < 4 ? simd_sum(out[lid]) : 0.0f;\n  out[lid] = v;\n",
                "", "inside a statement", 6},
        Refused{"ReturnBeforeABarrier", "  if (lid >= 100) return;\n  threadgroup_barrier(mem_flags::mem_none);\n", "",
                "may return (line 6) before", 7},
        Refused{"SimdFunctionInAnArgument", "  out[lid] = simd_sum(simd_max(out[lid]));\n", "", "in an argument of `simd_sum`", 6},
        Refused{"RecursiveHelper", "  out[lid] = f(out[lid], 2);\n",
                "float f(float v, int d) { v = simd_sum(v); v = f(v, d - 1); return v; }\n", "recursive", 3},
        Refused{"HelperReturnsEarly", "  out[lid] = f(out[lid]);\n",
                "float f(float v) {\n  if (v > 0) return v;\n  v = simd_sum(v);\n  return v;\n}\n", "returns before its end", 4},
        Refused{"HelperWithAReferenceParameter", "  float v = out[lid];\n  g(v);\n  out[lid] = v;\n",
                "void g(thread float& v) { v = simd_sum(v); }\n", "reference parameter", 8},
        Refused{"ThreadgroupVariableInTheBody",
                "  threadgroup float s[32];\n  s[lane] = out[lid];\n  threadgroup_barrier(mem_flags::mem_threadgroup);\n  out[lid] = s[0];\n",
                "", "threadgroup variable `s`", 6}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(LoopForm, ShippedRmsNormQualifies) {
  Parsed p = parse_text(read(std::filesystem::path(MTLGEN_SOURCE_DIR) / "out/rms_norm/rms_norm.metal"), "rms_norm.metal");
  ASSERT_EQ(p.diags.error_count(), 0) << p.diags.format_all();
  const LoopFormKernel& k = kernel(p, "rms_norm");
  EXPECT_EQ(k.refusal, "");
  EXPECT_EQ(k.loop_function, "mtlsim_loops_rms_norm");
  if (getenv("MTLGEN_SHOW_LOOP_FORM")) std::cout << p.unit.loop_form().text;
}

}  // namespace
}  // namespace mtlgen::msl::testing

namespace mtlgen::msl::testing {
namespace {

TEST(LoopForm, ShippedKernelsTable) {
  if (!getenv("MTLGEN_SHOW_LOOP_FORM")) GTEST_SKIP();
  for (const auto& dir : std::filesystem::directory_iterator(std::filesystem::path(MTLGEN_SOURCE_DIR) / "out")) {
    auto metal = dir.path() / (dir.path().filename().string() + ".metal");
    if (!std::filesystem::exists(metal)) continue;
    Parsed p = parse_text(read(metal), metal.filename().string());
    for (const auto& k : p.unit.loop_form().kernels)
      std::cout << dir.path().filename().string() << " " << k.function << ": "
                << (k.refusal.empty() ? "loops" : k.refusal + " (line " + std::to_string(k.refusal_line) + ")") << "\n";
  }
}

}  // namespace
}  // namespace mtlgen::msl::testing
