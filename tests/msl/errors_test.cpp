// Located errors: clang's, at the user's line and column; inputs that must not crash.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "msl_test_util.h"

namespace mtlgen::msl::testing {
namespace {

using support::ErrorKind;

const support::Diagnostic& first_error(const Parsed& p) {
  for (const auto& d : p.diags.all())
    if (d.severity == support::Severity::error) return d;
  throw std::runtime_error("no error");
}

TEST(MslErrors, SyntaxErrorAtItsLineAndColumn) {
  Parsed p = parse_text(R"(#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = 1.0f +;
}
)",
                        "dir/bad.metal");
  const auto& d = first_error(p);
  EXPECT_EQ(d.kind, ErrorKind::msl_syntax);
  EXPECT_EQ(d.loc.file, "dir/bad.metal");
  EXPECT_EQ(d.loc.line, 4);
  EXPECT_EQ(d.loc.column, 18);
  EXPECT_NE(d.message.find("expected expression"), std::string::npos);
  EXPECT_NE(p.diags.format(d).find("out[i] = 1.0f +;"), std::string::npos);  // quotes the line
  EXPECT_FALSE(d.hint.empty());
}

TEST(MslErrors, ErrorInsideAMacroIsReportedAtTheInvocation) {
  Parsed p = parse_text(R"(#include <metal_stdlib>
#define BAD_STORE(p) p[0] = undefined_name
kernel void k(device float* out [[buffer(0)]]) {
  BAD_STORE(out);
}
)");
  const auto& d = first_error(p);
  EXPECT_EQ(d.loc.line, 4);
  EXPECT_NE(d.message.find("undefined_name"), std::string::npos);
}

TEST(MslErrors, ErrorInsideTheShimIsReportedAtTheUsersLine) {
  Parsed p = parse_text(R"(#include <metal_stdlib>
using namespace metal;
struct NotANumber {};
kernel void k(device float* out [[buffer(0)]], uint i [[thread_index_in_simdgroup]]) {
  NotANumber n;
  out[i] = float4(n, n, n, n).x;
}
)");
  ASSERT_TRUE(p.diags.has_errors());
  const auto& d = first_error(p);
  EXPECT_EQ(d.loc.file, "k.metal");
  EXPECT_EQ(d.loc.line, 6);
}

// A header beside a main file named without a directory (`mtlgen import k.metal`): its errors
// name the header as clang does (./sub/bad.h) and quote the header's line.
TEST(MslErrors, ErrorInAHeaderBesideARelativeMainFileQuotesTheHeader) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("mtlgen_header_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "sub");
  std::ofstream(dir / "sub" / "bad.h") << "#pragma once\ninline float twice(float v) { return v +; }\n";
  const std::filesystem::path cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  Parsed p = parse_text(R"(#include <metal_stdlib>
#include "sub/bad.h"
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) { out[i] = twice(out[i]); }
)");
  std::filesystem::current_path(cwd);
  std::filesystem::remove_all(dir);
  const auto& d = first_error(p);
  EXPECT_EQ(d.loc.file, "./sub/bad.h");
  EXPECT_EQ(d.loc.line, 2);
  EXPECT_NE(p.diags.format(d).find("return v +;"), std::string::npos) << p.diags.format(d);
}

TEST(MslErrors, MissingHeaderIsLocatedWithAHint) {
  Parsed p = parse_text("#include <metal_stdlib>\n#include \"not_here.h\"\nkernel void k(device int* x) {}\n");
  const auto& d = first_error(p);
  EXPECT_EQ(d.loc.line, 2);
  EXPECT_EQ(d.loc.column, 10);
  EXPECT_NE(d.hint.find("metal_stdlib"), std::string::npos);
}

TEST(MslErrors, EmptyFileHasNoEntryPoint) {
  Parsed p = parse_text("");
  ASSERT_TRUE(p.diags.has_errors());
  const auto& d = first_error(p);
  EXPECT_EQ(d.loc.file, "k.metal");
  EXPECT_EQ(d.loc.line, 1);
  EXPECT_NE(d.message.find("no kernel entry point"), std::string::npos);
  EXPECT_TRUE(p.unit.entry_points().empty());
}

// `check` of several specs shares one Diagnostics: another file's error must not hide this one's.
TEST(MslErrors, NoEntryPointIsReportedAfterAnotherFilesError) {
  support::Diagnostics diags;
  diags.error(support::ErrorKind::bad_value, {"other.yaml", 3, 1}, "an earlier spec's error");
  ParseOptions options;
  options.file = "k.metal";
  options.text = "#include <metal_stdlib>\ninline float twice(float v) { return 2 * v; }\n";
  parse(options, diags);
  ASSERT_EQ(diags.error_count(), 2) << diags.format_all();
  EXPECT_NE(diags.all()[1].message.find("no kernel entry point"), std::string::npos);
}

TEST(MslErrors, BinaryGarbageIsRejectedWithoutCrashing) {
  std::string junk;
  for (int i = 0; i < 4096; ++i) junk.push_back(static_cast<char>((i * 7919 + 13) % 256));
  Parsed p = parse_text(junk);
  ASSERT_TRUE(p.diags.has_errors());
  EXPECT_EQ(first_error(p).loc.file, "k.metal");
  EXPECT_GT(first_error(p).loc.line, 0);
}

TEST(MslErrors, DeeplyNestedParenthesesAreRejectedWithoutCrashing) {
  std::string text = "kernel void k(device int* x) { int v = " + std::string(10000, '(') + "1" +
                     std::string(10000, ')') + "; }\n";
  Parsed p = parse_text(text);
  ASSERT_TRUE(p.diags.has_errors());
  EXPECT_EQ(first_error(p).loc.line, 1);
}

TEST(MslErrors, UnreadableFileIsAnIoError) {
  support::Diagnostics diags;
  ParseOptions options;
  options.file = input("does_not_exist.metal");
  parse(options, diags);
  ASSERT_TRUE(diags.has_errors());
  EXPECT_EQ(diags.all()[0].kind, ErrorKind::io);
}

}  // namespace
}  // namespace mtlgen::msl::testing
