// Errors in a spec's body (found by the MSL front end in the emitted kernel) and reference (the
// emitted C++ through libclang) are reported once, at the spec's line and column: one file per error class under body_errors/, its first line stating
// the diagnostic in the grammar of tests/spec/spec_test_util.h. Every shipped spec's body passes.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "check_msl/check_msl.h"
#include "check_msl/checked_library.h"
#include "spec_test_util.h"

namespace mtlgen::spec::testing {
namespace {

fs::path dir() { return fs::path(MTLGEN_CHECK_MSL_TEST_DIR) / "body_errors"; }

std::vector<std::string> cases() {
  std::vector<std::string> out;
  for (const auto& p : yaml_files(dir())) out.push_back(p.stem().string());
  return out;
}

class BodyError : public ::testing::TestWithParam<std::string> {};

TEST_P(BodyError, ReportedOnceAtTheSpecLine) {
  fs::path path = dir() / (GetParam() + ".yaml");
  std::string error;
  auto x = parse_expectation(first_line(path), error);
  ASSERT_TRUE(x) << error;
  support::Diagnostics diags;
  std::string shown = GetParam() + ".yaml";
  auto kernel = load_spec(path.string(), shown, diags);
  ASSERT_TRUE(kernel) << "the spec itself must be valid: " << diags.format_all();
  bool body_ok = check_msl::check_emitted_msl(*kernel, diags);
  EXPECT_FALSE(check_msl::check_emitted_reference(*kernel, diags) && body_ok);
  const support::Diagnostic* found = nullptr;
  std::set<std::string> allowed(x->also.begin(), x->also.end());
  allowed.insert(x->kind);
  for (const auto& d : diags.all()) {
    EXPECT_EQ(d.loc.file, shown) << "reported in another file: " << diags.format(d);
    EXPECT_TRUE(allowed.count(support::to_string(d.kind))) << "unexpected: " << diags.format(d);
    if (support::to_string(d.kind) == x->kind && d.loc.line == x->line && d.loc.column == x->column) found = &d;
  }
  ASSERT_TRUE(found) << "expected " << x->kind << " at " << x->line << ":" << x->column << "; got\n"
                     << diags.format_all();
  EXPECT_NE(found->message.find(x->message), std::string::npos) << found->message;
  EXPECT_NE(found->hint.find(x->hint), std::string::npos) << found->hint;
  EXPECT_LE(diags.error_count(), 2) << "one error per mistake, not one per variant:\n" << diags.format_all();
}

INSTANTIATE_TEST_SUITE_P(CheckMsl, BodyError, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param; });

// An error in a reference's included file is reported once, at the file's own line and column
// (not at the spec's, nor in the generated code around it): what the compiler says, and what the
// bracket check says before it.
TEST(ReferenceInclude, ErrorsAtTheIncludedFilesLines) {
  const fs::path dir = fs::path(MTLGEN_CHECK_MSL_TEST_DIR) / "include_errors";
  struct Case {
    const char* spec;
    const char* file;
    int line, column;
    const char* message;
  };
  for (const Case& c : {Case{"scale.yaml", "include_errors/scale.inc", 3, 17, "undeclared identifier 'factr'"},
                        Case{"unbalanced.yaml", "include_errors/unbalanced.inc", 2, 33, "this `{` is never closed"}}) {
    SCOPED_TRACE(c.spec);
    support::Diagnostics diags;
    auto kernel = load_spec((dir / c.spec).string(), std::string("include_errors/") + c.spec, diags);
    ASSERT_TRUE(kernel) << diags.format_all();
    EXPECT_FALSE(check_msl::check_emitted_reference(*kernel, diags));
    ASSERT_EQ(diags.error_count(), 1) << diags.format_all();
    const support::Diagnostic& d = diags.all().front();
    EXPECT_EQ(d.kind, support::ErrorKind::msl_syntax);
    EXPECT_EQ(d.loc.file, c.file) << diags.format_all();
    EXPECT_EQ(d.loc.line, c.line) << diags.format_all();
    EXPECT_EQ(d.loc.column, c.column) << diags.format_all();
    EXPECT_NE(d.message.find(c.message), std::string::npos) << d.message;
  }
}

// No false positives: the bodies and references of the generator's own test specs, each loaded as
// `mtlgen verify tests/verify/twins/x.yaml` loads it from the source root (libclang's verdicts are
// shared through $MTLGEN_CACHE_DIR with the verify tests that load them too). The shipped library's
// are checked by `mtlgen check specs` (the shipped_library_checked test), which fails on any error.
TEST(CheckMsl, TestSpecBodiesAreMetal) {
  fs::current_path(source_dir());
  for (const char* d : {"tests/emit/in", "tests/verify/twins"}) {
    for (const auto& path : yaml_files(d)) {
      support::Diagnostics diags;
      const auto kernels = check_msl::load_library({path.string()}, diags);
      EXPECT_FALSE(kernels.empty()) << path;
      EXPECT_FALSE(diags.has_errors()) << diags.format_all();
    }
  }
}

// A hand-written kernel's file holds its own file-scope code: `prelude:` is refused at its line,
// `reference_prelude:` accepted (and checked as C++ at its own lines).
TEST(CheckMsl, PreludeIsForBodyKernels) {
  fs::path from = source_dir() / "tests/import";
  fs::path root = fs::temp_directory_path() / ("mtlgen-prelude-" + std::to_string(::getpid()));
  fs::create_directories(root / "specs");
  fs::copy(from / "kernels", root / "kernels", fs::copy_options::recursive);
  std::string text = read_text(from / "specs/scale_shift.yaml");
  text += "prelude: |\n  constant constexpr int K = 8;\nreference_prelude: |\n  inline float twice(float v) { return 2 * v; }\n";
  std::ofstream(root / "specs/s.yaml") << text;
  support::Diagnostics diags;
  auto kernel = load_spec((root / "specs/s.yaml").string(), "s.yaml", diags);
  fs::remove_all(root);
  EXPECT_FALSE(kernel);
  int prelude_line = static_cast<int>(std::count(text.begin(), text.end(), '\n')) - 3;
  ASSERT_EQ(diags.error_count(), 1) << diags.format_all();
  EXPECT_EQ(diags.all().front().loc.line, prelude_line) << diags.format_all();
  EXPECT_NE(diags.all().front().message.find("`prelude:` is for kernels with a `body:`"), std::string::npos);
}

}  // namespace
}  // namespace mtlgen::spec::testing
