// simulator_source(): the same lines as the user's file, with threadgroup declarations turned
// into per-threadgroup storage, `constant` into `const`, [[threadgroup(n)]] into the shim's name.
#include <sstream>

#include "msl_test_util.h"

namespace mtlgen::msl::testing {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

size_t count_newlines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

TEST(MslRewrite, GgmlLinesKeepTheirNumbers) {
  Parsed p = parse_input("ggml_style.metal");
  std::string sim = p.unit.simulator_source();
  ASSERT_EQ(count_newlines(sim), count_newlines(p.unit.text()));
  auto lines = lines_of(sim);
  EXPECT_EQ(lines[23], "constant bool has_bias [[function_constant(0)]];");  // stays assignable
  EXPECT_EQ(lines[27], "        const    ggml_metal_kargs_norm & args,");
  EXPECT_EQ(lines[31], "        threadgroup float  * shmem_f32 [[mtlsim_tgrp(0)]],");
  EXPECT_EQ(lines[60], "    auto& partial = ::mtlsim::threadgroup_local<float[32]>([]{}, \"partial\");");
  // Untouched lines are byte for byte the original.
  auto original = lines_of(p.unit.text());
  EXPECT_EQ(lines[40], original[40]);
}

TEST(MslRewrite, TwoDimensionalTemplatedArrayAndPointerLocal) {
  Parsed p = parse_input("mlx_style.metal");
  auto lines = lines_of(p.unit.simulator_source());
  EXPECT_EQ(lines[13], "  auto& tile = ::mtlsim::threadgroup_local<T[BM][BK + 1]>([]{}, \"tile\");");
  EXPECT_EQ(lines[14], "  threadgroup float* scratch_ptr = nullptr;");  // a pointer local stays
  EXPECT_EQ(lines[10], "    const    uint& n [[buffer(2)]],");
  // The instantiation macros are left as written (g++ ignores host_name).
  EXPECT_EQ(lines[22], "  template [[host_name(name)]] [[kernel]] decltype(func<__VA_ARGS__>) func<__VA_ARGS__>;");
}

TEST(MslRewrite, LocalHeadersAreRewrittenToo) {
  Parsed p = parse_input("mlx_style.metal");
  auto headers = p.unit.simulator_headers();
  ASSERT_EQ(headers.size(), 1u);
  EXPECT_EQ(headers[0].path.filename(), "mlx_softmax.h");
  EXPECT_EQ(headers[0].key, "mlx_softmax.h");  // beside the main file's copy, as it is beside the file
  auto lines = lines_of(headers[0].text);
  // `#line` first: g++ and the reports number the header's line L as 1,000,000 + L, under its path.
  EXPECT_EQ(lines[0], "#line 1000001 // " + headers[0].path.string());
  EXPECT_EQ(lines[22], "  auto& local_max = ::mtlsim::threadgroup_local<AccT[SIMD_SIZE]>([]{}, \"local_max\");");
  EXPECT_EQ(lines[17], "    const    int& axis_size,");
  auto at = header_line_of(1000022, {headers[0].text});
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(at->path, headers[0].path.string());
  EXPECT_EQ(at->line, 22);
  EXPECT_FALSE(header_line_of(22, {headers[0].text}).has_value());  // the main file's line
  EXPECT_FALSE(header_line_of(2000022, {headers[0].text}).has_value());  // no second header
}

TEST(MslRewrite, MultiLineDeclarationKeepsLaterLinesInPlace) {
  std::string text = R"(#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], uint i [[thread_index_in_threadgroup]]) {
  threadgroup
      float
      sums[4]
      [8];
  sums[i][0] = 1.0f;
  out[i] = sums[i][0];
}
)";
  Parsed p = parse_text(text);
  ASSERT_FALSE(p.diags.has_errors()) << p.diags.format_all();
  std::string sim = p.unit.simulator_source();
  EXPECT_EQ(count_newlines(sim), count_newlines(text));
  auto lines = lines_of(sim);
  EXPECT_EQ(lines[3], "  auto& sums = ::mtlsim::threadgroup_local<float[4] [8]>([]{}, \"sums\")");
  EXPECT_EQ(lines[6], ";");
  EXPECT_EQ(lines[7], "  sums[i][0] = 1.0f;");
}

// `constant` beside a `const` (MLX's `static const constant U max`, `static constant constexpr
// const` through a macro) is dropped: `const const` does not compile.
TEST(MslRewrite, ConstantBesideConstIsDropped) {
  std::string text = R"(#include <metal_stdlib>
using namespace metal;
#define STATIC_CONST static constant constexpr const
template <typename U> struct limits {
  static const constant U max = U(7);
};
STATIC_CONST int kRows = 4;
constant constexpr float kScale = 2.0f;
struct P { float x; constexpr P(float v) constant : x(v) {} float get() const constant { return x; } };
constant P kHalf(0.5f);
kernel void k(device int* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = limits<int>::max + kRows + int(kScale) + int(kHalf.get());
}
)";
  Parsed p = parse_text(text);
  ASSERT_FALSE(p.diags.has_errors()) << p.diags.format_all();
  auto lines = lines_of(p.unit.simulator_source());
  EXPECT_EQ(lines[2], "#define STATIC_CONST static          constexpr const");
  EXPECT_EQ(lines[4], "  static const          U max = U(7);");
  EXPECT_EQ(lines[7], "const    constexpr float kScale = 2.0f;");
  // A `constant` that qualifies `this` is no const (a const constructor is no C++): the parse
  // blanks it, and the simulator's copy keeps it as written, empty in the shim.
  EXPECT_EQ(lines[8], "struct P { float x; constexpr P(float v) constant : x(v) {} float get() const constant { return x; } };");
}

// MLX's complex_t overloads its members on the address space of `this` and its operators on
// their parameters'; once address spaces are erased the overloads with equal bodies are one C++
// function, kept once (the later ones are blanked, their lines kept).
TEST(MslRewrite, OverloadsOnAddressSpaceAreKeptOnce) {
  std::string text = R"(#include <metal_stdlib>
using namespace metal;
struct cplx {
  float re;
  constexpr cplx() thread : re(0) {}
  constexpr cplx() constant : re(0) {}
  float get() const thread { return re; }
  float get() const constant { return re; }
};
constexpr thread cplx& operator+=(thread cplx& a, cplx b) { a.re += b.re; return a; }
constexpr device cplx& operator+=(device cplx& a, cplx b) { a.re += b.re; return a; }
kernel void k(device cplx* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  cplx c;
  out[i] += c;
  out[i].re = out[i].get();
}
)";
  Parsed p = parse_text(text);
  ASSERT_FALSE(p.diags.has_errors()) << p.diags.format_all();
  std::string sim = p.unit.simulator_source();
  EXPECT_EQ(count_newlines(sim), count_newlines(text));
  auto lines = lines_of(sim);
  EXPECT_EQ(lines[4], "  constexpr cplx() thread : re(0) {}");
  EXPECT_EQ(lines[5], "  ");  // `constant` qualifies `this` there: never a const constructor
  EXPECT_EQ(lines[7], "  ");
  EXPECT_EQ(lines[10], "");
  EXPECT_EQ(p.unit.cuda_source().find("device cplx& a"), std::string::npos);
}

// Overloads whose bodies differ by more than their address spaces cannot be one C++ function.
TEST(MslRewrite, OverloadsOnAddressSpaceWithDifferentBodiesStayErrors) {
  Parsed p = parse_text(R"(#include <metal_stdlib>
using namespace metal;
float first(device const float* p) { return p[0]; }
float first(threadgroup const float* p) { return p[1]; }
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) { out[i] = first(out); }
)");
  EXPECT_TRUE(p.diags.has_errors());
  EXPECT_NE(p.diags.format_all().find("redefinition"), std::string::npos) << p.diags.format_all();
}

// GNU range designators (ggml's `float sumf[N] = { [ 0 ... N - 1 ] = 0.0f };`), which g++ rejects
// in C++: the copy value-initialises the array and sets each range after the statement, in the
// order written, on the same line.
TEST(MslRewrite, RangeDesignatorsBecomeAValueInitialisedArrayAndSetRanges) {
  std::string text = R"(#include <metal_stdlib>
using namespace metal;
template <short NQ>
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  float s[NQ] = { [ 0 ... NQ - 1 ] = 0.0f };
  float m[NQ] = { [0 ... NQ/2] = -FLT_MAX/2, [NQ/2 ... NQ-1] = 1.0f },
        t[2] = {
          [0 ... 1] = 3.0f };
  float plain[NQ] = { 1.0f, 2.0f };
  out[i] = s[0] + m[0] + t[0] + plain[0];
}
template [[host_name("k4")]] kernel void k<4>(device float*, uint);
)";
  Parsed p = parse_text(text);
  ASSERT_FALSE(p.diags.has_errors()) << p.diags.format_all();
  std::string sim = p.unit.simulator_source();
  EXPECT_EQ(count_newlines(sim), count_newlines(text));
  auto lines = lines_of(sim);
  EXPECT_EQ(lines[4], "  float s[NQ] = {}; ::mtlsim::set_range(s, 0, NQ - 1, 0.0f);");
  EXPECT_EQ(lines[5], "  float m[NQ] = {},");
  EXPECT_EQ(lines[6], "        t[2] = {}");
  EXPECT_EQ(lines[7], "; ::mtlsim::set_range(m, 0, NQ/2, -FLT_MAX/2); ::mtlsim::set_range(m, NQ/2, NQ-1, 1.0f);"
                      " ::mtlsim::set_range(t, 0, 1, 3.0f);");
  EXPECT_EQ(lines[8], "  float plain[NQ] = { 1.0f, 2.0f };");  // no designator: as written
}

// Metal does not run a threadgroup variable's initializer: the copy drops it with the declaration
// (the storage starts uninitialised, as on the GPU), and the parse warns at its line.
TEST(MslRewrite, ThreadgroupInitializerIsDroppedWithAWarning) {
  std::string text = R"(#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], uint i [[thread_index_in_threadgroup]]) {
  threadgroup float local_buffer[32] = {0};
  threadgroup float sums[4] = { [0 ... 3] = 1.0f };
  out[i] = local_buffer[i] + sums[0];
}
)";
  Parsed p = parse_text(text);
  ASSERT_FALSE(p.diags.has_errors()) << p.diags.format_all();
  auto lines = lines_of(p.unit.simulator_source());
  EXPECT_EQ(lines[3], "  auto& local_buffer = ::mtlsim::threadgroup_local<float[32]>([]{}, \"local_buffer\");");
  EXPECT_EQ(lines[4], "  auto& sums = ::mtlsim::threadgroup_local<float[4]>([]{}, \"sums\");");
  ASSERT_EQ(p.unit.threadgroup_variables().size(), 2u);
  EXPECT_TRUE(p.unit.threadgroup_variables()[0].initializer);
  std::string printed = p.diags.format_all();
  EXPECT_NE(printed.find("k.metal:4:21: warning: the initializer of threadgroup variable `local_buffer` is not run"),
            std::string::npos) << printed;
  EXPECT_NE(printed.find("k.metal:5:21: warning: the initializer of threadgroup variable `sums`"), std::string::npos)
      << printed;
}

}  // namespace
}  // namespace mtlgen::msl::testing
