// One YAML file per rejected input class under rejects/; its first line states the diagnostic:
//   # expect: <kind> <line>:<col>[; also: ...][; message: ...][; hint: ...][; missing-hint: ...][; known-bug: ...]
// (grammar in spec_test_util.h). Each file becomes one test named after it.
#include "spec_test_util.h"

#include <set>

#include "support/text.h"

namespace mtlgen::spec::testing {
namespace {

struct RejectCase {
  std::string name;  // file stem
  fs::path path;
  Expectation expect;
};

void PrintTo(const RejectCase& c, std::ostream* os) { *os << c.path.filename().string(); }

std::vector<RejectCase> all_reject_cases() {
  std::vector<RejectCase> out;
  for (const auto& path : yaml_files(spec_test_dir() / "rejects")) {
    std::string error;
    auto x = parse_expectation(first_line(path), error);
    RejectCase c{path.stem().string(), path, x.value_or(Expectation{})};
    if (!x) c.expect.kind = "<malformed: " + error + ">";
    out.push_back(std::move(c));
  }
  return out;
}

template <typename Keep>
std::vector<RejectCase> reject_cases(Keep keep) {
  std::vector<RejectCase> out;
  for (auto& c : all_reject_cases()) {
    if (keep(c.expect)) out.push_back(std::move(c));
  }
  return out;
}

std::string case_name(const ::testing::TestParamInfo<RejectCase>& info) { return info.param.name; }

// Loads the file as `<stem>.yaml` and finds the expected diagnostic.
class RejectFixture : public ::testing::TestWithParam<RejectCase> {
 protected:
  void load() {
    const RejectCase& c = GetParam();
    display_ = c.name + ".yaml";
    kernel_ = load_spec(c.path.string(), display_, diags_);
  }

  const support::Diagnostic* expected() const {
    const Expectation& x = GetParam().expect;
    for (const auto& d : diags_.all()) {
      if (support::to_string(d.kind) == x.kind && d.loc.line == x.line && d.loc.column == x.column) return &d;
    }
    return nullptr;
  }

  std::string report() const { return "\nreported:\n" + diags_.format_all(); }

  void check_diagnostic() {
    const Expectation& x = GetParam().expect;
    ASSERT_EQ(x.kind.rfind("<malformed", 0), std::string::npos) << GetParam().path << ": " << x.kind;
    load();
    EXPECT_FALSE(kernel_.has_value()) << "the spec was accepted";
    const support::Diagnostic* d = expected();
    ASSERT_NE(d, nullptr) << "no `" << x.kind << "` error at " << x.line << ":" << x.column << report();
    EXPECT_EQ(d->severity, support::Severity::error);
    EXPECT_EQ(d->loc.file, display_);
    EXPECT_FALSE(d->message.empty());
    if (!x.message.empty()) {
      EXPECT_NE(d->message.find(x.message), std::string::npos) << d->message;
    }
    if (!x.hint.empty()) {
      EXPECT_NE(d->hint.find(x.hint), std::string::npos) << d->hint;
    }
    for (const auto& other : diags_.all()) {
      if (&other == d || other.severity != support::Severity::error) continue;
      std::string kind = support::to_string(other.kind);
      EXPECT_NE(std::find(x.also.begin(), x.also.end(), kind), x.also.end())
          << "unexpected further error; list its kind under `also:` if it belongs" << report();
    }
  }

  void check_hint() {
    load();
    const support::Diagnostic* d = expected();
    ASSERT_NE(d, nullptr) << report();
    EXPECT_FALSE(d->hint.empty()) << "no hint for: " << d->message;
  }

  std::string display_;
  support::Diagnostics diags_;
  std::optional<ir::Kernel> kernel_;
};

class Reject : public RejectFixture {};
TEST_P(Reject, ReportsTheExpectedDiagnostic) { check_diagnostic(); }
INSTANTIATE_TEST_SUITE_P(Spec, Reject,
                         ::testing::ValuesIn(reject_cases([](const Expectation& x) { return x.known_bug.empty(); })),
                         case_name);

class RejectHint : public RejectFixture {};
TEST_P(RejectHint, HasAHint) { check_hint(); }
INSTANTIATE_TEST_SUITE_P(Spec, RejectHint, ::testing::ValuesIn(reject_cases([](const Expectation& x) {
                           return x.known_bug.empty() && x.missing_hint.empty();
                         })),
                         case_name);

// Files marked `missing-hint:` document diagnostics reported without a hint (a generator bug).
class RejectMissingHint : public RejectFixture {};
TEST_P(RejectMissingHint, DISABLED_HasAHint) { check_hint(); }
INSTANTIATE_TEST_SUITE_P(Spec, RejectMissingHint, ::testing::ValuesIn(reject_cases([](const Expectation& x) {
                           return x.known_bug.empty() && !x.missing_hint.empty();
                         })),
                         case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(RejectMissingHint);

// Files marked `known-bug:` document inputs the front end accepts or mislocates today.
class RejectKnownBug : public RejectFixture {};
TEST_P(RejectKnownBug, DISABLED_ReportsTheExpectedDiagnostic) { check_diagnostic(); }
INSTANTIATE_TEST_SUITE_P(Spec, RejectKnownBug,
                         ::testing::ValuesIn(reject_cases([](const Expectation& x) { return !x.known_bug.empty(); })),
                         case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(RejectKnownBug);

// The folder itself: every file has a well-formed expect line naming a real error kind, and every
// error kind a spec can trigger from its text has at least one file.
TEST(RejectFolder, ExpectLinesAreWellFormed) {
  std::vector<std::string> kinds;
  for (int k = 0; k <= static_cast<int>(support::ErrorKind::test_case); ++k) {  // test_case is the last kind
    kinds.push_back(support::to_string(static_cast<support::ErrorKind>(k)));
  }
  std::set<std::string> covered;
  auto cases = all_reject_cases();
  EXPECT_GE(cases.size(), 30u);
  for (const auto& c : cases) {
    std::string error;
    auto x = parse_expectation(first_line(c.path), error);
    ASSERT_TRUE(x) << c.path << ": " << error;
    EXPECT_NE(std::find(kinds.begin(), kinds.end(), x->kind), kinds.end()) << c.path << ": kind " << x->kind;
    for (const auto& a : x->also) EXPECT_NE(std::find(kinds.begin(), kinds.end(), a), kinds.end()) << c.path;
    EXPECT_TRUE(support::is_identifier(c.name)) << c.path << ": test names need [A-Za-z0-9_] file names";
    if (x->known_bug.empty()) covered.insert(x->kind);
  }
  // io and file-too-large are covered in limits_test.cpp (a missing file; a generated 1 MiB file).
  for (const auto& k : kinds) {
    if (k == "io" || k == "file-too-large") continue;
    EXPECT_TRUE(covered.count(k)) << "no reject file for error kind " << k;
  }
}

// Every error of every rejected file carries a hint, not just the expected one; files marked
// `missing-hint:` document the exceptions.
TEST(RejectFolder, EveryErrorHasAHint) {
  for (const auto& c : all_reject_cases()) {
    if (!c.expect.missing_hint.empty()) continue;
    support::Diagnostics diags;
    load_spec(c.path.string(), c.name + ".yaml", diags);
    for (const auto& d : diags.all()) {
      EXPECT_FALSE(d.hint.empty()) << c.path.filename().string() << ": no hint for " << diags.format(d);
    }
  }
}

TEST(RejectFolder, ExpectationGrammar) {
  std::string error;
  auto x = parse_expectation("# expect: unknown-key 10:1; also: missing-field, wrong-type; hint: did you mean `a`?",
                             error);
  ASSERT_TRUE(x) << error;
  EXPECT_EQ(x->kind, "unknown-key");
  EXPECT_EQ(x->line, 10);
  EXPECT_EQ(x->column, 1);
  EXPECT_EQ(x->also, (std::vector<std::string>{"missing-field", "wrong-type"}));
  EXPECT_EQ(x->hint, "did you mean `a`?");
  EXPECT_FALSE(parse_expectation("# expect: unknown-key", error));
  EXPECT_FALSE(parse_expectation("name: x", error));
  EXPECT_FALSE(parse_expectation("# expect: bad-value 1:1; typo: x", error));
}

}  // namespace
}  // namespace mtlgen::spec::testing
