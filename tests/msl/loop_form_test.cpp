// Unit::loop_form(): which kernels get a loop form (issue 17 item 2) and why the others do not.
#include <fstream>
#include <set>
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

// How many times `s` occurs in `text` (overlapping occurrences too).
size_t occurrences(const std::string& text, const std::string& s) {
  size_t n = 0;
  for (size_t at = text.find(s); at != std::string::npos; at = text.find(s, at + 1)) ++n;
  return n;
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
  const std::string text = p.unit.loop_form().text();
  EXPECT_NE(text.find("auto mtlsim_s1 = ::mtlsim::loops::result<decltype(simd_sum(v))>();"), std::string::npos) << text;
  EXPECT_NE(text.find("v += mtlsim_s1;"), std::string::npos) << text;
  EXPECT_NE(text.find("out[lid] = 1.0f / mtlsim_s2 + v;"), std::string::npos) << text;
}

// Register promotion: a region keeps the values it names in locals, read from the frames at its
// start and stored back at its end where it may change them; arrays stay bound to their slots,
// and the last region stores nothing back.
TEST(LoopForm, RegionsKeepValuesInLocals) {
  Parsed p = parse_text(kernel_text(
      "  float acc = 0.0f;\n"
      "  float arr[2] = {1.0f, 2.0f};\n"
      "  const uint base = lid * 4;\n"
      "  float scale = out[0];\n"
      "  for (uint i = 0; i < 4; ++i) acc += out[base + i];\n"
      "  acc = simd_sum(acc);\n"
      "  uint idx = lane;\n"
      "  if (lane == 0) tg[sg] = acc * scale + arr[1];\n"
      "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
      "  out[lid] = tg[idx % 4] + acc * scale + float(base) + arr[0];\n"));
  ASSERT_EQ(p.diags.error_count(), 0) << p.diags.format_all();
  EXPECT_EQ(kernel(p, "k").refusal, "");
  const std::string text = p.unit.loop_form().text();
  auto count = [&](const std::string& s) { return occurrences(text, s); };
  EXPECT_NE(text.find("\nfloat acc = 0.0f;\n"), std::string::npos) << "declared as written: " << text;
  EXPECT_EQ(text.find("auto& acc"), std::string::npos) << text;
  EXPECT_EQ(count("auto acc = mtlsim_f_acc[mtlsim_t];\n"), 2u) << text;
  // Declared, then assigned the simd_sum's result before any later region reads it: only the
  // region that assigns it stores it (none in the last region).
  EXPECT_EQ(count("mtlsim_f_acc[mtlsim_t] = acc;\n"), 1u) << text;
  EXPECT_EQ(count("mtlsim_f_scale[mtlsim_t] = scale;\n"), 1u) << "only read after its region: " << text;
  EXPECT_EQ(count("mtlsim_f_base[mtlsim_t] = base;\n"), 1u) << text;
  // A copy of a builtin that nothing changes: declared again in the region that reads it, no frame.
  EXPECT_EQ(text.find("mtlsim_f_idx"), std::string::npos) << text;
  EXPECT_EQ(count("[[maybe_unused]] uint idx = lane;\n"), 2u) << text;
  EXPECT_NE(text.find("auto& arr = ::mtlsim::loops::keep(mtlsim_f_arr[mtlsim_t], mtlsim_d_arr);"), std::string::npos) << text;
  EXPECT_NE(text.find("[[maybe_unused]] auto& arr = mtlsim_f_arr[mtlsim_t];"), std::string::npos) << text;
}

// A value assigned before the next region reads it needs no store, unless a loop header or closing
// brace comes between (the loop may come back to a region that reads it).
TEST(LoopForm, StoresOnlyWhatALaterRegionMayRead) {
  Parsed p = parse_text(kernel_text(
      "  float acc = out[lid];\n"
      "  for (uint r = 0; r < 2; ++r) {\n"
      "    out[lid + r] = acc;\n"
      "    acc = simd_sum(acc);\n"
      "  }\n"
      "  out[lid] = acc;\n"));
  ASSERT_EQ(p.diags.error_count(), 0) << p.diags.format_all();
  EXPECT_EQ(kernel(p, "k").refusal, "");
  const std::string text = p.unit.loop_form().text();
  // Before the loop and after the simd_sum's result (the loop comes back); not at the simd_sum,
  // whose result the next region assigns.
  EXPECT_EQ(occurrences(text, "mtlsim_f_acc[mtlsim_t] = acc;"), 2u) << text;
}

// A region that names a macro of the user's file (which may name a value unseen) binds every
// kept value to its slot, as does one that takes a value's address.
TEST(LoopForm, MacrosAndAddressesKeepValuesInTheirSlots) {
  Parsed p = parse_text(kernel_text(
      "  float acc = out[lid];\n"
      "  float other = out[lid + 1];\n"
      "  acc = simd_sum(acc);\n"
      "  BUMP;\n"
      "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
      "  thread float* p = &other;\n"
      "  out[lid] = acc + *p;\n",
      "#define BUMP acc += 1.0f\n"));
  ASSERT_EQ(p.diags.error_count(), 0) << p.diags.format_all();
  EXPECT_EQ(kernel(p, "k").refusal, "");
  const std::string text = p.unit.loop_form().text();
  const size_t bump = text.find("BUMP;"), by_reference = text.rfind("[[maybe_unused]] auto& acc = mtlsim_f_acc[mtlsim_t];\n", bump);
  ASSERT_NE(by_reference, std::string::npos) << text;
  EXPECT_EQ(text.find("[[maybe_unused]] auto& other = mtlsim_f_other[mtlsim_t];\n", by_reference), by_reference + 53) << text;
  EXPECT_EQ(text.find("mtlsim_f_acc[mtlsim_t] = acc;", by_reference), std::string::npos) << "no store back there: " << text;
  EXPECT_NE(text.find("auto acc = mtlsim_f_acc[mtlsim_t];", bump), std::string::npos) << "the last region names no macro: " << text;
  EXPECT_EQ(text.find("auto other = "), std::string::npos) << text;
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
  const std::string text = p.unit.loop_form().text();
  EXPECT_NE(text.find("using mtlsim_h1_T = std::remove_cvref_t<float>;"), std::string::npos) << text;
  EXPECT_NE(text.find("constexpr uint mtlsim_h1_N = 4;"), std::string::npos) << text;
  EXPECT_NE(text.find("mtlsim_h1_value"), std::string::npos) << text;
  EXPECT_NE(text.find("#line 5\nsimd_sum(mtlsim_h1_value);"), std::string::npos) << "the helper's own lines: " << text;
  EXPECT_NE(text.find("#define MTLSIM_LOOPS_k 1"), std::string::npos);
}

// A `for` loop around sync points whose trip count every thread shares keeps its header, run
// once per threadgroup, with its body's regions inside; its counter and the body's declarations
// get fresh names.
TEST(LoopForm, UniformLoopAroundASimdFunctionKeepsItsHeader) {
  Parsed p = parse_text(kernel_text(
      "  float acc[4] = {out[lid], 1, 2, 3};\n"
      "  for (uint r = 0; r < 4; ++r) {\n"
      "    float sum = simd_sum(acc[r]);\n"
      "    if (lane == 0) tg[r * 2 + sg] = sum;\n"
      "  }\n"
      "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
      "  out[lid] = tg[lid % 8];\n"));
  ASSERT_EQ(p.diags.error_count(), 0) << p.diags.format_all();
  EXPECT_EQ(kernel(p, "k").refusal, "");
  const std::string text = p.unit.loop_form().text();
  EXPECT_NE(text.find("#line 7\nfor (uint mtlsim_b1_r = 0; mtlsim_b1_r < 4; ++mtlsim_b1_r) {\n::mtlsim::loops::segment("),
            std::string::npos) << text;
  EXPECT_NE(text.find("#line 8\nsimd_sum(acc[mtlsim_b1_r]);\n},"), std::string::npos) << text;
  EXPECT_NE(text.find("float mtlsim_b2_sum = ::mtlsim::loops::result<decltype(simd_sum(acc[mtlsim_b1_r]))>();"), std::string::npos)
      << text;
  EXPECT_NE(text.find("});\n#line 7\n}\n::mtlsim::loops::segment("), std::string::npos) << "the loop closes between segments: " << text;
}

// A helper's two shuffle loops (tg_argmax): each loop's `other` is its own, and a temporary a
// later region reads is kept in a frame of the call's type.
TEST(LoopForm, HelperLoopsWithBarriersAndTemporaries) {
  const std::string helper =
      "constant constexpr uint W = 32;\n"
      "float best(float v, threadgroup float* s, uint lane, uint sg) {\n"
      "  for (ushort o = W / 2; o > 0; o /= 2) {\n"
      "    float2 other = {simd_shuffle_xor(v, o), simd_shuffle_xor(v + 1, o)};\n"
      "    v = max(v, other.x + other.y);\n"
      "  }\n"
      "  if (lane == 0) s[sg] = v;\n"
      "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
      "  v = s[lane % 2];\n"
      "  for (ushort o = W / 2; o > 0; o /= 2) {\n"
      "    float other = simd_shuffle_xor(v, o);\n"
      "    v = max(v, other);\n"
      "  }\n"
      "  return v;\n"
      "}\n";
  Parsed p = parse_text(kernel_text("  out[lid] = best(out[lid], tg, lane, sg);\n", helper));
  ASSERT_EQ(p.diags.error_count(), 0) << p.diags.format_all();
  EXPECT_EQ(kernel(p, "k").refusal, "");
  const std::string text = p.unit.loop_form().text();
  EXPECT_NE(text.find("auto* mtlsim_f_mtlsim_s1 = ::mtlsim::loops::frame<float>(mtlsim_run, false);"), std::string::npos) << text;
  EXPECT_NE(text.find("for (ushort mtlsim_b1_mtlsim_h1_o = W / 2;"), std::string::npos) << text;
  EXPECT_NE(text.find("mtlsim_b2_mtlsim_h1_other"), std::string::npos) << text;
  EXPECT_NE(text.find("mtlsim_b4_mtlsim_h1_other"), std::string::npos) << "the second loop's own `other`: " << text;
}

// A branch on a uniform value (a template parameter, a loop counter) around a barrier.
TEST(LoopForm, UniformBranchInsideAUniformLoop) {
  Parsed p = parse_text(
      "#include <metal_stdlib>\nusing namespace metal;\n"
      "template <uint TG>\n"
      "kernel void k(device float* out [[buffer(0)]], threadgroup float* tg [[threadgroup(0)]],\n"
      "              uint lid [[thread_index_in_threadgroup]]) {\n"
      "  float v = out[lid];\n"
      "  for (uint stage = 0; stage < 2; ++stage) {\n"
      "    if (stage == 1 && TG > 32) {\n"
      "      tg[lid] = v;\n"
      "      threadgroup_barrier(mem_flags::mem_threadgroup);\n"
      "      v = tg[(lid + 1) % TG];\n"
      "    } else {\n"
      "      v = simd_sum(v);\n"
      "    }\n"
      "  }\n"
      "  out[lid] = v;\n"
      "}\n"
      "template [[host_name(\"k64\")]] kernel void k<64>(device float*, threadgroup float*, uint);\n");
  ASSERT_EQ(p.diags.error_count(), 0) << p.diags.format_all();
  EXPECT_EQ(kernel(p, "k").refusal, "");
  const std::string text = p.unit.loop_form().text();
  EXPECT_NE(text.find("#line 8\nif (mtlsim_b1_stage == 1 && TG > 32) {\n"), std::string::npos) << text;
  EXPECT_NE(text.find("#line 12\n} else {\n"), std::string::npos) << text;
}

// A loop around simd functions (no barrier) whose trip count is the same within each simdgroup,
// not across the threadgroup (sdpa_vector's keys `j = simd_group; j < kv_len`): a simdgroup block,
// its header read with the lane's values (here a `constant` argument through a `const` local), its
// regions run by the simdgroup.
TEST(LoopForm, SimdgroupUniformLoopBecomesABlock) {
  Parsed p = parse_text(
      "#include <metal_stdlib>\nusing namespace metal;\n"
      "struct Args { uint rows; };\n"
      "kernel void k(device float* out [[buffer(0)]], constant Args& args [[buffer(1)]],\n"
      "              uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]]) {\n"
      "  const uint rows = args.rows;\n"
      "  for (uint r = sg; r < rows; r += 2) {\n"
      "    float s = simd_sum(out[r * 32 + lane]);\n"
      "    if (sg == 0) s = simd_max(s);\n"
      "    if (lane == 0) out[r] = s;\n"
      "  }\n"
      "}\n");
  ASSERT_EQ(p.diags.error_count(), 0) << p.diags.format_all();
  EXPECT_EQ(kernel(p, "k").refusal, "");
  const std::string text = p.unit.loop_form().text();
  EXPECT_NE(text.find("::mtlsim::loops::block([&](const ::mtlsim::detail::SimdGroup& mtlsim_sg, uint32_t mtlsim_lead) -> uint32_t {\n"
                      "const uint32_t mtlsim_t = mtlsim_lead;\n"),
            std::string::npos) << text;
  EXPECT_NE(text.find("#line 7\nfor (uint mtlsim_b1_r = sg; mtlsim_b1_r < rows; mtlsim_b1_r += 2) {\n"
                      "mtlsim_lead = ::mtlsim::loops::simd_run(mtlsim_run, mtlsim_sg, mtlsim_lead,"),
            std::string::npos) << text;
  EXPECT_NE(text.find("#line 9\nif (sg == 0) {\nmtlsim_lead = ::mtlsim::loops::simd_run("), std::string::npos)
      << "a nested branch on the simdgroup stays in the block: " << text;
  EXPECT_NE(text.find("#line 7\n}\nreturn mtlsim_lead;\n})"), std::string::npos) << text;
  EXPECT_NE(text.find("#if !defined(__SANITIZE_THREAD__)\n#define MTLSIM_LOOPS_k 1\n#endif\n"), std::string::npos)
      << "fibers in the race-instrumented module: " << text;
}

// A `switch` on a `constant` argument around helpers that reach simd functions (affine_matvec's
// `switch (bits)`): a simdgroup block whose cases are braced and end in `break`.
TEST(LoopForm, UniformSwitchAroundSimdFunctions) {
  Parsed p = parse_text(
      "#include <metal_stdlib>\nusing namespace metal;\n"
      "struct Args { uint bits; };\n"
      "kernel void k(device float* out [[buffer(0)]], constant Args& args [[buffer(1)]],\n"
      "              uint lane [[thread_index_in_simdgroup]]) {\n"
      "  switch (args.bits) {\n"
      "    case 3:\n"
      "    case 4:\n"
      "      out[lane] = simd_sum(out[lane]);\n"
      "      break;\n"
      "    default:\n"
      "      out[lane] = simd_max(out[lane]);\n"
      "  }\n"
      "}\n");
  ASSERT_EQ(p.diags.error_count(), 0) << p.diags.format_all();
  EXPECT_EQ(kernel(p, "k").refusal, "");
  const std::string text = p.unit.loop_form().text();
  EXPECT_NE(text.find("#line 6\nswitch (args.bits) {\n#line 7\ncase 3: case 4: {\n"), std::string::npos) << text;
  EXPECT_NE(text.find("#line 11\ndefault: {\n"), std::string::npos) << text;
  EXPECT_NE(text.find("} break;\n#line 6\n}\nreturn mtlsim_lead;\n})"), std::string::npos) << text;
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
                "a branch whose condition may differ between threads", 6},
        Refused{"BarrierInALoopOverTheThreadIndex",
                "  for (uint i = lid; i < 100; i += 64) {\n    threadgroup_barrier(mem_flags::mem_none);\n  }\n", "",
                "a loop whose trip count may differ between threads", 6},
        Refused{"SimdFunctionInALoopBoundedByABuffer",
                "  for (uint i = 0; i < uint(out[0]); ++i) out[lid] += simd_sum(out[i]);\n", "",
                "a loop whose trip count may differ between threads", 6},
        Refused{"LoopCounterChangedInTheBody",
                "  for (uint i = 0; i < 4; ++i) {\n    out[lid] = simd_sum(out[i]);\n    if (lane == 0) i++;\n  }\n", "",
                "a loop whose trip count may differ between threads", 6},
        Refused{"BreakOutOfAUniformLoop",
                "  for (uint i = 0; i < 4; ++i) {\n    out[lid] = simd_sum(out[i]);\n    if (out[lid] > 0) break;\n  }\n", "",
                "a loop whose trip count may differ between threads", 6},
        Refused{"SimdFunctionInALoopOverTheLane",
                "  for (uint i = lane; i < 100; i += 32) out[lid] += simd_sum(out[i]);\n", "",
                "a loop whose trip count may differ between threads", 6},
        Refused{"BarrierInALoopOverTheSimdgroup",
                "  for (uint i = sg; i < 4; i += 2) {\n    out[lid] = simd_sum(out[i]);\n"
                "    threadgroup_barrier(mem_flags::mem_none);\n  }\n", "",
                "a threadgroup barrier inside a loop or branch that is the same only within each simdgroup", 8},
        Refused{"SimdFunctionInALoopBoundedByALocalItChanges",
                "  uint n = 4;\n  for (uint i = sg; i < n; i += 2) {\n    out[lid] = simd_sum(out[i]);\n    n = lane;\n  }\n", "",
                "a loop whose trip count may differ between threads", 7},
        Refused{"SwitchCaseFallsThrough",
                "  switch (lid % 2) {\n    case 0:\n      out[lid] = simd_sum(out[lid]);\n    default:\n      out[lid] += 1;\n  }\n",
                "", "a `switch` whose condition may differ between threads, or whose cases fall through", 6},
        Refused{"SimdFunctionInAWhileLoop", "  uint i = 0;\n  while (i < 4) {\n    out[lid] = simd_sum(out[i]);\n    ++i;\n  }\n", "",
                "inside a `while` or `do` loop", 7},
        Refused{"SimdFunctionEvaluatedConditionally", "  float v = lid < 4 ? simd_sum(out[lid]) : 0.0f;\n  out[lid] = v;\n",
                "", "inside a statement", 6},
        Refused{"ReturnBeforeABarrier", "  if (lid >= 100) return;\n  threadgroup_barrier(mem_flags::mem_none);\n", "",
                "may return (line 6) before", 7},
        Refused{"SimdFunctionInAnArgument", "  out[lid] = simd_sum(simd_max(out[lid]));\n", "", "in an argument of `simd_sum`", 6},
        Refused{"RecursiveHelper", "  out[lid] = f(out[lid], 2);\n",
                "float f(float v, int d) { v = simd_sum(v); v = f(v, d - 1); return v; }\n", "recursive", 3},
        Refused{"HelperReturnsEarly", "  out[lid] = f(out[lid]);\n",
                "float f(float v) {\n  if (v > 0) return v;\n  v = simd_sum(v);\n  return v;\n}\n", "returns before its end", 4},
        Refused{"BarrierInABranchThatReturnsOnAThreadValue",
                "  if (lid < 32) {\n    threadgroup_barrier(mem_flags::mem_none);\n    return;\n  }\n", "",
                "a branch whose condition may differ between threads", 6},
        Refused{"ReturnInTheMiddleOfAUniformBranch",
                "  if (4 > 2) {\n    threadgroup_barrier(mem_flags::mem_none);\n    if (lid == 0) return;\n"
                "    threadgroup_barrier(mem_flags::mem_none);\n    return;\n  }\n", "",
                "may return (line 8) before", 9},
        Refused{"SimdgroupMatrixFunction",
                "  simdgroup_float8x8 m;\n  simdgroup_load(m, tg, 8);\n  simdgroup_store(m, out, 8);\n", "",
                "a simdgroup matrix function", 7},
        Refused{"HelperReturnsEarlyOnAThreadValue", "  f(out, lid);\n",
                "void f(device float* out, uint lid) {\n  if (lid > 3) return;\n  out[lid] = simd_sum(out[lid]);\n}\n",
                "a helper returns before its end, where its threads may differ", 4},
        // A kernel's return per simdgroup (LoopForm.KernelReturnPerSimdgroupBeforeSimdFunctions)
        // with a barrier after it, or inside a loop.
        Refused{"BarrierAfterAReturnPerSimdgroup",
                "  if (sg != 0) return;\n  threadgroup_barrier(mem_flags::mem_threadgroup);\n  out[lid] = simd_sum(out[lid]);\n",
                "", "a threadgroup barrier inside a loop or branch that is the same only within each simdgroup", 7},
        Refused{"ReturnPerSimdgroupInsideALoop",
                "  for (uint i = 0; i < 4; ++i) {\n    if (sg != 0) return;\n    out[lid] = simd_sum(out[lid]);\n  }\n", "",
                "a loop whose trip count may differ", 6}),
    [](const auto& info) { return std::string(info.param.name); });

// A threadgroup variable declared in a body (MLX's rms_norm, layer_norm, softmax, arg_reduce,
// sdpa_vector) is one per threadgroup whatever its scope: declared once at the top of the loop form,
// as the fibers' rewrite declares it, under its scope's name, and never kept per thread.
TEST(LoopForm, ThreadgroupVariablesInTheBodyAreDeclaredOnce) {
  Parsed p = parse_text(kernel_text(
      "  threadgroup float sums[32];\n"
      "  float v = simd_sum(out[lid]);\n"
      "  if (lane == 0) sums[sg] = v;\n"
      "  for (uint r = 0; r < 2; ++r) {\n"
      "    threadgroup float other[4];\n"
      "    threadgroup_barrier(mem_flags::mem_threadgroup);\n"
      "    other[r] = sums[r];\n"
      "  }\n"
      "  out[lid] = sums[lane % 2];\n"));
  ASSERT_EQ(p.diags.error_count(), 0) << p.diags.format_all();
  EXPECT_EQ(kernel(p, "k").refusal, "");
  const std::string text = p.unit.loop_form().text();
  const size_t first = text.find("::mtlsim::loops::segment(");
  EXPECT_LT(text.find("#line 6\n::mtlsim::detail::tls_lane = &mtlsim_run.lanes[0];\n"
                      "auto& sums = ::mtlsim::threadgroup_local<float[32]>([]{}, \"sums\");\n"), first) << text;
  EXPECT_LT(text.find("auto& mtlsim_b2_other = ::mtlsim::threadgroup_local<float[4]>([]{}, \"other\");\n"), first) << text;
  EXPECT_EQ(text.find("mtlsim_f_sums"), std::string::npos) << "not kept per thread: " << text;
  EXPECT_NE(text.find("mtlsim_b2_other[mtlsim_b1_r] = sums[mtlsim_b1_r];"), std::string::npos) << text;
}

// A parameter the body assigns (MLX's `x += gid * axis_size`), or passes to a helper that takes it
// by reference, is each thread's own: the regions name a copy, where the loop form's parameters
// are the threadgroup's.
TEST(LoopForm, AssignedParametersAreCopiedPerThread) {
  Parsed p = parse_text(kernel_text("  out += lid;\n  bump(tg);\n  float v = simd_sum(out[0]);\n  out[0] = v + tg[0];\n",
                                    "void bump(threadgroup float*& p) { p += 1; }\n"));
  ASSERT_EQ(p.diags.error_count(), 0) << p.diags.format_all();
  EXPECT_EQ(kernel(p, "k").refusal, "");
  const std::string text = p.unit.loop_form().text();
  EXPECT_NE(text.find("device float* mtlsim_p_out = out;"), std::string::npos) << text;
  EXPECT_NE(text.find("mtlsim_p_out += lid;"), std::string::npos) << text;
  EXPECT_NE(text.find("threadgroup float* mtlsim_p_tg = tg;"), std::string::npos) << "passed by reference: " << text;
  EXPECT_NE(text.find("mtlsim_p_out[0] = v + mtlsim_p_tg[0];"), std::string::npos) << text;
}

// A branch around barriers on the threadgroup's size and a `constant` argument (ggml's argmax and
// soft_max: `if (ntg > N_SIMDWIDTH)`) is the same for every thread; one whose body ends in
// `return;` returns after its last region, and a barrier after it is reached by the threads that
// did not take it (all or none).
TEST(LoopForm, BranchOnTheThreadgroupSizeAroundBarriers) {
  Parsed p = parse_text(
      "#include <metal_stdlib>\nusing namespace metal;\n"
      "struct Args { int n; };\n"
      "kernel void k(constant Args& args, device float* out [[buffer(1)]], threadgroup float* tg [[threadgroup(0)]],\n"
      "              uint lid [[thread_position_in_threadgroup]], uint3 tptg [[threads_per_threadgroup]],\n"
      "              uint ntg [[threads_per_threadgroup]]) {\n"
      "  float v = simd_max(out[lid]);\n"
      "  if (ntg > 32 && args.n > 0) {\n"
      "    tg[lid] = v;\n"
      "    threadgroup_barrier(mem_flags::mem_threadgroup);\n"
      "    out[lid] = tg[(lid + 1) % min(ntg, 64u)];\n"
      "    return;\n"
      "  }\n"
      "  if (tptg.x > 32) {\n"
      "    threadgroup_barrier(mem_flags::mem_threadgroup);\n"
      "  }\n"
      "  out[lid] = v;\n"
      "}\n");
  ASSERT_EQ(p.diags.error_count(), 0) << p.diags.format_all();
  EXPECT_EQ(kernel(p, "k").refusal, "");
  const std::string text = p.unit.loop_form().text();
  EXPECT_NE(text.find("#line 8\nif (ntg > 32 && args.n > 0) {\n::mtlsim::loops::segment("), std::string::npos) << text;
  EXPECT_NE(text.find("});\n#line 8\nreturn;\n}\n"), std::string::npos) << "returns after the branch's last region: " << text;
  EXPECT_EQ(text.find("\nreturn;\n});"), std::string::npos) << "the branch's own return is the control's: " << text;
  EXPECT_NE(text.find("#line 14\nif (tptg.x > 32) {\n"), std::string::npos) << text;
}

// A helper with `const constant int&` parameters, a `thread float&` one and an early return on a
// value the same in each simdgroup (MLX's qmv_impl, `if (out_row >= out_vec_size) return;`): the
// const reference is bound as a value, the other as a pointer to the caller's variable, and the
// rest of the helper becomes the branch `if (!(...))`, a simdgroup block.
TEST(LoopForm, HelperReferencesAndAnEarlyReturnPerSimdgroup) {
  Parsed p = parse_text(
      "#include <metal_stdlib>\nusing namespace metal;\n"
      "template <int N = 4>\n"
      "void rows(device float* y, const constant int& n, thread float& total, uint sg, uint lane) {\n"
      "  typedef float U;\n"
      "  const int row = int(sg) * N;\n"
      "  if (row >= n) {\n"
      "    return;\n"
      "  }\n"
      "  for (int r = 0; r < N && row + r < n; r++) {\n"
      "    U s = simd_sum(y[(row + r) * 32 + lane]);\n"
      "    total += s;\n"
      "  }\n"
      "}\n"
      "kernel void k(device float* y [[buffer(0)]], const constant int& n [[buffer(1)]],\n"
      "              uint sg [[simdgroup_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]]) {\n"
      "  float total = 0;\n"
      "  rows(y, n, total, sg, lane);\n"
      "  if (lane == 0) y[sg] = total;\n"
      "}\n");
  ASSERT_EQ(p.diags.error_count(), 0) << p.diags.format_all();
  EXPECT_EQ(kernel(p, "k").refusal, "");
  const std::string text = p.unit.loop_form().text();
  EXPECT_NE(text.find("constexpr int mtlsim_h1_N = 4;"), std::string::npos) << "the default argument: " << text;
  EXPECT_NE(text.find("int mtlsim_h1_n = (n);"), std::string::npos) << text;
  EXPECT_NE(text.find("thread float* mtlsim_h1_total = (&total);"), std::string::npos) << text;
  EXPECT_NE(text.find("#line 5\ntypedef float U;\n"), std::string::npos) << text;
  EXPECT_NE(text.find("#line 7\nif (!(mtlsim_h1_row >= mtlsim_h1_n)) {\n"), std::string::npos) << text;
  EXPECT_NE(text.find("(*mtlsim_h1_total) += mtlsim_b"), std::string::npos) << text;
  EXPECT_NE(text.find("::mtlsim::loops::block("), std::string::npos) << text;
}

// A dependent simd call (MLX's softmax.h `simd_max(maxval)`, `maxval` of type AccT) that a user
// file overloads for one type (bf16_math.h's `simd_max(bfloat16_t)`; in/simd_overloads.h's
// `simd_max(wide_t)`): the loop form checks, in each instantiation, that the shim's simd function
// takes the call and that no overload takes its first argument's type exactly, so g++ refuses the
// form (and the kernel runs as fibers) where the overload would be called; a class's hidden friend
// counts as an overload. A template overload in another file is refused outright.
TEST(LoopForm, DependentSimdCallsBesideAUsersOverload) {
  const auto text = [](const std::string& define) {
    return "#include <metal_stdlib>\nusing namespace metal;\n" + define +
           "#include \"simd_overloads.h\"\n"
           "template <typename T>\n"
           "kernel void k(device T* out [[buffer(0)]], threadgroup T* tg [[threadgroup(0)]],\n"
           "              uint lid [[thread_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]],\n"
           "              uint sg [[simdgroup_index_in_threadgroup]]) {\n"
           "  T v = out[lid];\n"
           "  v = simd_max(v);\n"
           "  if (lane == 0) tg[sg] = v;\n"
           "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
           "  out[lid] = simd_max(tg[lane % 4]);\n"
           "}\n"
           "template [[host_name(\"k_f32\")]] kernel decltype(k<float>) k<float>;\n";
  };
  Parsed p = parse_text(text(""), input("simd_overloads.metal").string());
  ASSERT_EQ(p.diags.error_count(), 0) << p.diags.format_all();
  EXPECT_EQ(kernel(p, "k").refusal, "");
  const std::string form = p.unit.loop_form().text();
  EXPECT_NE(form.find("{ using mtlsim_a0 = ::std::remove_cvref_t<decltype((v))>;\n"
                      "using mtlsim_builtin [[maybe_unused]] = decltype(simd_max<mtlsim_a0>(v));\n"
                      "static_assert(!::std::is_same_v<mtlsim_a0, ::std::remove_cvref_t<wide_t>>, \"mtlgen loop form: "
                      "`simd_max` at line 9 calls an overload of the user's files here, not the simd function\");\n}\n"
                      "simd_max(v);\n"),
            std::string::npos)
      << form;
  EXPECT_NE(form.find("decltype((tg[lane % 4]))"), std::string::npos) << form;

  Parsed befriended = parse_text(text("#define FRIEND_OVERLOAD\n"), input("simd_overloads.metal").string());
  ASSERT_EQ(befriended.diags.error_count(), 0) << befriended.diags.format_all();
  EXPECT_EQ(kernel(befriended, "k").refusal, "");
  const std::string checked = befriended.unit.loop_form().text();
  EXPECT_NE(checked.find("static_assert(!::std::is_same_v<mtlsim_a0, ::std::remove_cvref_t<narrow_t>>"), std::string::npos)
      << "a hidden friend: " << checked;

  Parsed halved = parse_text(text("#define HALF_OVERLOAD\n"), input("simd_overloads.metal").string());
  ASSERT_EQ(halved.diags.error_count(), 0) << halved.diags.format_all();
  const std::string half_checked = halved.unit.loop_form().text();
  EXPECT_NE(half_checked.find("static_assert(!::std::is_same_v<mtlsim_a0, ::std::remove_cvref_t<half>>"), std::string::npos)
      << "an overload for half, spelled as g++ knows it: " << half_checked;

  Parsed templated = parse_text(text("#define TEMPLATE_OVERLOAD\n"), input("simd_overloads.metal").string());
  ASSERT_EQ(templated.diags.error_count(), 0) << templated.diags.format_all();
  const LoopFormKernel& k = kernel(templated, "k");
  EXPECT_EQ(k.loop_function, "");
  EXPECT_NE(k.refusal.find("`simd_max` is overloaded by a template of the user's files"), std::string::npos) << k.refusal;
  EXPECT_EQ(k.refusal_line, 10) << k.refusal;
}

// MLX's arg_reduce.metal: a template overload of a simd function in the kernel's file, for a pair
// (`simd_shuffle_down(IndexValPair<U>, uint16_t)`), beside the simd function itself. Each dependent
// call is resolved per call: the kernel's `simd_shuffle_down(best, offset)`, whose argument clang
// spells `Pair<T>`, inlines the template (`U` deduced from the pattern `Pair<U>` as `T`, checked per
// instantiation with the simd function not taking the call), and the template's own calls on
// `data.index` and `data.val` are the simd function's (checked: a generic lambda with the
// template's parameters does not take their type). The template returns a braced value built from
// those two calls: each goes to a temporary kept in its argument's type.
TEST(LoopForm, SimdFunctionOverloadedByATemplateOfTheKernelsFile) {
  const std::string source =
      "#include <metal_stdlib>\nusing namespace metal;\n"
      "template <typename U>\n"
      "struct Pair {\n"
      "  uint32_t index;\n"
      "  U val;\n"
      "};\n"
      "template <typename U>\n"
      "Pair<U> simd_shuffle_down(Pair<U> data, uint16_t delta) {\n"
      "  return Pair<U>{simd_shuffle_down(data.index, delta), simd_shuffle_down(data.val, delta)};\n"
      "}\n"
      "template <typename T>\n"
      "kernel void k(device T* x [[buffer(0)]], device uint32_t* out [[buffer(1)]], uint lane [[thread_index_in_simdgroup]]) {\n"
      "  Pair<T> best{lane, x[lane]};\n"
      "  for (uint offset = 16; offset > 0; offset /= 2) {\n"
      "    Pair<T> other = simd_shuffle_down(best, offset);\n"
      "    if (other.val > best.val) best = other;\n"
      "  }\n"
      "  out[lane] = best.index;\n"
      "}\n"
      "template [[host_name(\"kf\")]] kernel void k<float>(device float*, device uint32_t*, uint);\n";
  Parsed p = parse_text(source);
  ASSERT_EQ(p.diags.error_count(), 0) << p.diags.format_all();
  EXPECT_EQ(kernel(p, "k").refusal, "");
  const std::string form = p.unit.loop_form().text();
  EXPECT_NE(form.find("using mtlsim_h1_U = T;"), std::string::npos) << form;
  EXPECT_NE(form.find("static_assert(!requires { ::metal::simd_shuffle_down(best, mtlsim_b1_offset); }"), std::string::npos) << form;
  EXPECT_NE(form.find("static_assert(::std::is_same_v<::std::remove_cvref_t<decltype((best))>, "
                      "::std::remove_cvref_t<Pair<mtlsim_h1_U> >>"),
            std::string::npos)
      << form;
  EXPECT_NE(form.find("using mtlsim_builtin [[maybe_unused]] = decltype(simd_shuffle_down<mtlsim_a0>(mtlsim_h1_data.index, "
                      "mtlsim_h1_delta));"),
            std::string::npos)
      << form;
  EXPECT_NE(form.find("static_assert(!requires { []<typename U>(Pair<U> ) {}(::std::declval<mtlsim_a0>()); }"), std::string::npos)
      << form;
  EXPECT_NE(form.find("frame<::std::remove_cvref_t<decltype(::std::declval<Pair<mtlsim_h1_U> >().index)>>"), std::string::npos)
      << "the first shuffle's result, kept across the second: " << form;
  EXPECT_NE(form.find("(Pair<mtlsim_h1_U>{mtlsim_s1, mtlsim_s2})"), std::string::npos) << form;

  // A second template overload of the name in the file (one that takes any first argument): which
  // one a call chooses is not checked, so the kernel runs as fibers.
  std::string two = source;
  two.insert(two.find("template <typename T>\nkernel"),
             "template <typename U>\nU simd_shuffle_down(U data, uint16_t delta, uint16_t width) { return data; }\n");
  Parsed q = parse_text(two);
  ASSERT_EQ(q.diags.error_count(), 0) << q.diags.format_all();
  EXPECT_EQ(kernel(q, "k").loop_function, "");
  EXPECT_NE(kernel(q, "k").refusal.find("the helper `simd_shuffle_down` is overloaded"), std::string::npos)
      << kernel(q, "k").refusal;
}

// MLX's arg_reduce.metal: `if (simd_group_id != 0) return;` at the kernel's top level, before
// simdgroup 0's last simd functions: the same for a simdgroup's lanes, so the rest of the kernel
// becomes the simdgroup block `if (!(sg != 0)) { ... }`, which the simdgroups that return skip
// (they take part in none of its simd functions). A barrier after such a return is refused, and a
// return inside a uniform loop or branch is no kernel's guard.
TEST(LoopForm, KernelReturnPerSimdgroupBeforeSimdFunctions) {
  LoopFormKernel k = loop_form_of(
      "  float v = simd_sum(out[lid]);\n"
      "  if (lane == 0) tg[sg] = v;\n"
      "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
      "  if (sg != 0) {\n"
      "    return;\n"
      "  }\n"
      "  v = simd_sum(tg[lane % 4]);\n"
      "  if (lane == 0) out[0] = v;\n");
  EXPECT_EQ(k.refusal, "");
  EXPECT_NE(k.text.find("#line 9\nif (!(sg != 0)) {\n"), std::string::npos) << k.text;
  EXPECT_NE(k.text.find("::mtlsim::loops::block("), std::string::npos) << k.text;
  // Its refusals (a barrier after it, the return inside a loop) are cases of LoopFormRefusal.
}

// In a template, a dependent `sum += x[i]` is an operator call whose first operand is the value
// `sum`: it calls no function `sum` (MLX's quantized.h has one that reaches simd_sum).
TEST(LoopForm, ADependentOperatorCallsNoFunction) {
  Parsed p = parse_text(
      "#include <metal_stdlib>\nusing namespace metal;\n"
      "float sum(float v) { return simd_sum(v); }\n"
      "template <typename T>\n"
      "T load(const device T* x) {\n"
      "  T sum = 0;\n"
      "  for (int i = 0; i < 4; i++) sum += x[i];\n"
      "  return sum;\n"
      "}\n"
      "template <typename T>\n"
      "kernel void k(device T* x [[buffer(0)]], uint lane [[thread_index_in_simdgroup]]) {\n"
      "  for (int i = lane; i < 64; i += 32) x[i] = load(x + i);\n"
      "  x[lane] = simd_sum(x[lane]);\n"
      "}\n"
      "template [[host_name(\"kf\")]] kernel void k<float>(device float*, uint);\n");
  ASSERT_EQ(p.diags.error_count(), 0) << p.diags.format_all();
  EXPECT_EQ(kernel(p, "k").refusal, "");
}

TEST(LoopForm, ShippedRmsNormQualifies) {
  Parsed p = parse_text(read(std::filesystem::path(MTLGEN_SOURCE_DIR) / "out/rms_norm/rms_norm.metal"), "rms_norm.metal");
  ASSERT_EQ(p.diags.error_count(), 0) << p.diags.format_all();
  const LoopFormKernel& k = kernel(p, "rms_norm");
  EXPECT_EQ(k.refusal, "");
  EXPECT_EQ(k.loop_function, "mtlsim_loops_rms_norm");
  if (getenv("MTLGEN_SHOW_LOOP_FORM")) std::cout << p.unit.loop_form().text();
}

}  // namespace
}  // namespace mtlgen::msl::testing

namespace mtlgen::msl::testing {
namespace {

// Every kernel function of the shipped library (out/*.metal) runs as loops (docs/simulator.md);
// sdpa_vector's key loop, rms_norm_mlx's `if (simd_group == 0)` and the scan backward segments'
// loops bounded by `params` as simdgroup blocks. MTLGEN_SHOW_LOOP_FORM=1 prints the table.
TEST(LoopForm, ShippedKernelsRunAsLoops) {
  const std::set<std::string> fibers = {};
  size_t kernels = 0;
  for (const auto& dir : std::filesystem::directory_iterator(std::filesystem::path(MTLGEN_SOURCE_DIR) / "out")) {
    const std::string name = dir.path().filename().string();
    auto metal = dir.path() / (name + ".metal");
    if (!std::filesystem::exists(metal)) continue;
    Parsed p = parse_text(read(metal), metal.filename().string());
    for (const auto& k : p.unit.loop_form().kernels) {
      ++kernels;
      if (getenv("MTLGEN_SHOW_LOOP_FORM"))
        std::cout << name << " " << k.function << ": "
                  << (k.refusal.empty() ? "loops" : k.refusal + " (line " + std::to_string(k.refusal_line) + ")") << "\n";
      EXPECT_EQ(k.refusal.empty(), !fibers.count(name)) << name << " " << k.function << ": " << k.refusal;
    }
  }
  EXPECT_GE(kernels, 43u);
}

}  // namespace
}  // namespace mtlgen::msl::testing
