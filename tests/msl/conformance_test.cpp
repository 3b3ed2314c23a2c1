// Metal conformance checks (generator/msl/conformance.h). One file per rejected construct under
// conformance/reject/, each starting with the findings it must produce:
//   // expect: LINE:COL message fragment | citation fragment
//   // msl-version: 2.2          (optional; default 3.1)
// and idiomatic MLX/ggml-style kernels under conformance/accept/ that must produce none.
#include <clang-c/Index.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "msl/conformance.h"

namespace fs = std::filesystem;
using mtlgen::support::Diagnostic;
using mtlgen::support::Diagnostics;
using mtlgen::support::ErrorKind;

namespace {

const fs::path kCases = fs::path(MTLGEN_MSL_TEST_DIR) / "conformance";
const fs::path kShim = fs::path(MTLGEN_SOURCE_DIR) / "generator/sim/shim";

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The front end's pre-pass, as far as these inputs need it: `[[kernel]]` -> `kernel`,
// `[[host_name("x")]]` -> an annotate attribute, so that clang keeps both.
std::string respell(std::string text) {
  text = std::regex_replace(text, std::regex(R"(\[\[kernel\]\])"), "kernel");
  // `threadgroup` is an empty macro in the parse; the front end respells its attribute.
  text = std::regex_replace(text, std::regex(R"(\[\[threadgroup\()"), "[[mtlsim_tgrp(");
  return std::regex_replace(text, std::regex(R"(\[\[host_name\((.*?)\)\]\])"),
                            "__attribute__((annotate(\"mtl_host_name=\" $1)))");
}

// Parses `path` the way msl::parse does (flags from msl_unit.h's contract) and runs the checks.
struct Parsed {
  Diagnostics diags;
  std::vector<std::string> clang_errors;
};

void collect_clang_errors(CXTranslationUnit tu, Parsed& out) {
  for (unsigned i = 0, n = clang_getNumDiagnostics(tu); i < n; ++i) {
    CXDiagnostic d = clang_getDiagnostic(tu, i);
    if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) {
      CXString s = clang_formatDiagnostic(d, clang_defaultDiagnosticDisplayOptions());
      out.clang_errors.push_back(clang_getCString(s));
      clang_disposeString(s);
    }
    clang_disposeDiagnostic(d);
  }
}

void check_file(const fs::path& path, const std::string& msl_version, Parsed& out) {
  const std::string text = respell(read(path));
  const std::string shim = "-I" + kShim.string();
  const char* args[] = {"-x", "c++", "-std=c++20", "-Wno-attributes", "-Wno-unknown-attributes",
                        "-D_Float16=__fp16", "-Xclang", "-fallow-half-arguments-and-returns", shim.c_str(),
                        "-DMTLSIM_NO_KERNEL_KEYWORD", "-Dkernel=__attribute__((annotate(\"mtl_kernel\")))",
                        "-Ddevice=", "-Dconstant=", "-Dthread=", "-Dthreadgroup="};
  const std::string file = path.string();
  CXUnsavedFile unsaved{file.c_str(), text.c_str(), static_cast<unsigned long>(text.size())};
  CXIndex index = clang_createIndex(1, 1);
  CXTranslationUnit tu = clang_parseTranslationUnit(index, file.c_str(), args, int(std::size(args)), &unsaved, 1,
                                                    CXTranslationUnit_None);
  ASSERT_NE(tu, nullptr) << file;
  collect_clang_errors(tu, out);
  mtlgen::msl::check_conformance(tu, {file, msl_version}, out.diags);
  clang_disposeTranslationUnit(tu);
  clang_disposeIndex(index);
}

struct Expectation {
  int line = 0, column = 0;
  std::string message, citation;
};

std::vector<Expectation> expectations(const std::string& text) {
  std::vector<Expectation> out;
  std::regex re(R"(// expect: (\d+):(\d+) (.*) \| (.*))");
  for (std::sregex_iterator it(text.begin(), text.end(), re), end; it != end; ++it)
    out.push_back({std::stoi((*it)[1]), std::stoi((*it)[2]), (*it)[3], (*it)[4]});
  return out;
}

std::string version_of(const std::string& text) {
  std::smatch m;
  return std::regex_search(text, m, std::regex(R"(// msl-version: ([0-9.]+))")) ? m[1].str() : "3.1";
}

std::vector<Diagnostic> findings(const Diagnostics& diags) {
  std::vector<Diagnostic> out;
  for (const Diagnostic& d : diags.all())
    if (d.kind == ErrorKind::msl_conformance) out.push_back(d);
  std::stable_sort(out.begin(), out.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::pair(a.loc.line, a.loc.column) < std::pair(b.loc.line, b.loc.column);
  });
  return out;
}

std::vector<std::string> cases(const char* dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(kCases / dir))
    if (entry.path().extension() == ".metal") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string listing(const Parsed& p) {
  std::string s;
  for (const Diagnostic& d : p.diags.all()) s += p.diags.format(d) + "\n";
  for (const std::string& e : p.clang_errors) s += "clang: " + e + "\n";
  return s;
}

class Reject : public testing::TestWithParam<std::string> {};

TEST_P(Reject, ReportsTheConstructWhereItIsSpelled) {
  const fs::path path = kCases / "reject" / (GetParam() + ".metal");
  const std::string text = read(path);
  const auto expected = expectations(text);
  ASSERT_FALSE(expected.empty()) << path << " has no `// expect:` line";
  Parsed parsed;
  check_file(path, version_of(text), parsed);
  const auto found = findings(parsed.diags);
  ASSERT_EQ(found.size(), expected.size()) << listing(parsed);
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(listing(parsed));
    EXPECT_EQ(found[i].loc.file, path.string());
    EXPECT_EQ(found[i].loc.line, expected[i].line);
    EXPECT_EQ(found[i].loc.column, expected[i].column);
    EXPECT_NE(found[i].message.find(expected[i].message), std::string::npos) << found[i].message;
    EXPECT_NE(found[i].message.find(expected[i].citation), std::string::npos) << found[i].message;
    EXPECT_NE(found[i].message.find("Metal"), std::string::npos) << found[i].message;
    EXPECT_FALSE(found[i].hint.empty());
  }
}

INSTANTIATE_TEST_SUITE_P(Conformance, Reject, testing::ValuesIn(cases("reject")));

class Accept : public testing::TestWithParam<std::string> {};

TEST_P(Accept, IdiomaticMetalHasNoFindings) {
  const fs::path path = kCases / "accept" / (GetParam() + ".metal");
  Parsed parsed;
  check_file(path, version_of(read(path)), parsed);
  EXPECT_TRUE(parsed.clang_errors.empty()) << listing(parsed);  // it was really parsed
  EXPECT_TRUE(findings(parsed.diags).empty()) << listing(parsed);
}

INSTANTIATE_TEST_SUITE_P(Conformance, Accept, testing::ValuesIn(cases("accept")));

}  // namespace
