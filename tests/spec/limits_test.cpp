// The front end's resource limits: file size, YAML aliases and alias expansion ("billion laughs").
// Large inputs are generated here into a temporary directory rather than committed.
#include "spec_test_util.h"

#include <fmt/format.h>

#include <chrono>

#include "spec/spec_validator.h"

namespace mtlgen::spec::testing {
namespace {

// kMinimalSpec padded with a trailing comment to exactly `bytes` bytes.
std::string padded_spec(size_t bytes) {
  std::string text = kMinimalSpec;
  EXPECT_LT(text.size() + 2, bytes);
  text += "#";
  text += std::string(bytes - text.size() - 1, 'x');
  text += "\n";
  EXPECT_EQ(text.size(), bytes);
  return text;
}

// The test cases of kMinimalSpec, plus `extra` more whose dims are one shared alias.
std::string spec_with_aliases(int extra) {
  std::string text = kMinimalSpec;
  text.replace(text.find("{name: small, dims: {n: 5}}"), 27, "{name: small, dims: &d {n: 5}}");
  for (int i = 0; i < extra; ++i) text += fmt::format("    - {{name: again{}, dims: *d}}\n", i);
  return text;
}

const support::Diagnostic* only_error(const Loaded& r) {
  EXPECT_EQ(r.diags.all().size(), 1u) << r.diags.format_all();
  return r.diags.all().empty() ? nullptr : &r.diags.all()[0];
}

TEST(Limits, DefaultsAreDocumented) {
  YamlLimits l;
  EXPECT_EQ(l.max_file_bytes, 1u << 20);
  EXPECT_EQ(l.max_aliases, 64u);
  EXPECT_EQ(l.max_expanded_nodes, 100000u);
  EXPECT_EQ(kMaxBufferIndex, 30);
  EXPECT_EQ(kMaxThreadgroupBytes, 32768);
  EXPECT_EQ(kMaxThreadsPerThreadgroup, 1024);
  EXPECT_EQ(kMaxVariants, 256u);
  EXPECT_EQ(round_up_16(1), 16);
  EXPECT_EQ(round_up_16(16), 16);
  EXPECT_EQ(round_up_16(0), 0);
}

TEST(Limits, FileAboveOneMebibyteIsRejected) {
  auto r = load_text(padded_spec((1u << 20) + 1));
  EXPECT_FALSE(r.kernel);
  auto* d = only_error(r);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->kind, support::ErrorKind::file_too_large);
  EXPECT_EQ(d->loc.file, "spec.yaml");
  EXPECT_EQ(d->loc.line, 1);
  EXPECT_EQ(d->loc.column, 1);
  EXPECT_NE(d->message.find("1048577 bytes"), std::string::npos) << d->message;
  EXPECT_NE(d->message.find("1048576"), std::string::npos) << d->message;
  EXPECT_FALSE(d->hint.empty());
}

TEST(Limits, FileOfExactlyOneMebibyteLoads) {
  auto r = load_text(padded_spec(1u << 20));
  EXPECT_TRUE(r.kernel) << r.diags.format_all();
}

TEST(Limits, FileSizeLimitIsConfigurable) {
  YamlLimits limits;
  limits.max_file_bytes = 100;
  auto r = load_text(kMinimalSpec, limits);
  auto* d = only_error(r);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->kind, support::ErrorKind::file_too_large);
}

TEST(Limits, SixtyFourAliasesAreAllowed) {
  auto r = load_text(spec_with_aliases(64));
  EXPECT_TRUE(r.kernel) << r.diags.format_all();
  if (r.kernel) {
    EXPECT_EQ(r.kernel->tests.cases.size(), 65u);
  }
}

TEST(Limits, SixtyFiveAliasesAreRejectedAtTheFirstAlias) {
  auto r = load_text(spec_with_aliases(65));
  auto* d = only_error(r);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->kind, support::ErrorKind::alias_limit);
  EXPECT_EQ(d->loc.line, 19);  // the first `*d`
  EXPECT_EQ(d->loc.column, 28);
  EXPECT_FALSE(d->hint.empty());
}

TEST(Limits, AliasLimitIsConfigurable) {
  YamlLimits limits;
  limits.max_aliases = 2;
  auto r = load_text(spec_with_aliases(3), limits);
  auto* d = only_error(r);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->kind, support::ErrorKind::alias_limit);
}

// 3^levels nodes from 3 * levels aliases: each level lists the previous one three times.
std::string laughs(int levels, const std::string& indent) {
  std::string text = indent + "l0: &l0 [x, x, x]\n";
  for (int i = 1; i < levels; ++i) text += fmt::format("{}l{}: &l{} [*l{}, *l{}, *l{}]\n", indent, i, i, i - 1, i - 1, i - 1);
  return text;
}

TEST(Limits, ExpansionIsBoundedWithFewAliases) {
  // 60 aliases (under the alias limit) that expand to 3^20 nodes.
  auto r = load_text("name: laughs\n" + laughs(20, ""));
  auto* d = only_error(r);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->kind, support::ErrorKind::alias_limit);
  EXPECT_NE(d->message.find("100000"), std::string::npos) << d->message;
}

TEST(Limits, ExpansionLimitIsConfigurable) {
  YamlLimits limits;
  limits.max_expanded_nodes = 40;
  auto r = load_text(kMinimalSpec, limits);  // about 70 nodes, no alias at all
  auto* d = only_error(r);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->kind, support::ErrorKind::alias_limit);
}

// BUG (generator/spec/yaml_reader.cpp:43-44, expanded_nodes): in a mapping the key's count is added
// before `limit - count` is computed for the value; when the key brings `count` to limit + 1, the
// size_t subtraction wraps and the value is walked with no bound. A document whose node count
// reaches the limit exactly at a mapping key then walks an alias bomb in full (3^18 nodes from 54
// aliases takes minutes at the default limit). Fix: stop when `count > limit` before each call
// (e.g. `if (count > limit) break;` between the key and the value, or pass
// `count > limit ? 0 : limit - count`).
TEST(Limits, ExpansionBoundHoldsWhenTheLimitIsReachedAtAKey) {
  YamlLimits limits;
  limits.max_expanded_nodes = 10;
  // root(1) + key `pad`(1) + [7 items](8) = 10 = the limit when the key `boom` is counted.
  std::string text = "pad: [0, 0, 0, 0, 0, 0, 0]\nboom:\n" + laughs(16, "  ");  // 3^16 = 43M nodes
  auto start = std::chrono::steady_clock::now();
  auto r = load_text(text, limits);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto* d = only_error(r);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->kind, support::ErrorKind::alias_limit);
  EXPECT_LT(seconds, 0.5) << "the expansion walk was not bounded";
}

// The did-you-mean edit distance is quadratic; a 100,000-character name once took 18 s.
TEST(Limits, HugeUnknownNameIsReportedQuicklyWithoutASuggestion) {
  std::string text = kMinimalSpec;
  text.replace(text.find("x: {type: float"), 15, "x: {type: " + std::string(100000, 'f'));
  auto start = std::chrono::steady_clock::now();
  auto r = load_text(text);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_FALSE(r.kernel);
  auto* d = only_error(r);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->kind, support::ErrorKind::undefined_symbol);
  EXPECT_EQ(d->loc.line, 7);
  EXPECT_EQ(d->loc.column, 13);
  EXPECT_EQ(d->hint.find("did you mean"), std::string::npos) << d->hint;
  EXPECT_LT(seconds, 0.5) << "did-you-mean was not bounded";
}

TEST(Limits, DidYouMeanStillSuggestsForOrdinaryNames) {
  EXPECT_EQ(support::did_you_mean("flaot", {"float", "half"}), "float");
  EXPECT_EQ(support::did_you_mean(std::string(65, 'f'), {std::string(65, 'f')}), "");
  EXPECT_EQ(support::did_you_mean("x", {std::string(100000, 'x')}), "");
}

// yaml-cpp reads a file with CR-only line endings as one line; say so at the first CR.
TEST(Limits, CrOnlyLineEndingsAreOneLocatedError) {
  std::string text = kMinimalSpec;
  std::replace(text.begin(), text.end(), '\n', '\r');
  auto r = load_text(text);
  EXPECT_FALSE(r.kernel);
  auto* d = only_error(r);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->kind, support::ErrorKind::yaml_syntax);
  EXPECT_EQ(d->loc.line, 1);
  EXPECT_EQ(d->loc.column, 12);  // after `name: scale`
  EXPECT_NE(d->message.find("CR-only"), std::string::npos) << d->message;
  EXPECT_FALSE(d->hint.empty());
}

TEST(Limits, CrlfLineEndingsLoad) {
  std::string text;
  for (char c : std::string(kMinimalSpec)) text += c == '\n' ? std::string("\r\n") : std::string(1, c);
  auto r = load_text(text);
  EXPECT_TRUE(r.kernel) << r.diags.format_all();
}

TEST(Limits, EmptyFileIsOneLocatedError) {
  auto r = load_text("");
  EXPECT_FALSE(r.kernel);
  auto* d = only_error(r);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->kind, support::ErrorKind::missing_field);
  EXPECT_EQ(d->loc.line, 1);
  EXPECT_EQ(d->loc.column, 1);
  EXPECT_FALSE(d->hint.empty());
}

TEST(Limits, DeepNestingIsReportedAsNesting) {
  std::string text = "name: scale\ndims: " + std::string(300, '[') + std::string(300, ']') + "\n";
  auto r = load_text(text);
  EXPECT_FALSE(r.kernel);
  auto* d = only_error(r);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->kind, support::ErrorKind::yaml_syntax);
  EXPECT_EQ(d->loc.line, 2);
  EXPECT_EQ(d->loc.column, 7 + 63);  // the bracket that opens level 65 (the spec mapping is level 1)
  EXPECT_NE(d->message.find("nests deeper than 64 levels"), std::string::npos) << d->message;
}

TEST(Limits, DeepNestingIsAYamlErrorNotACrash) {
  std::string text = "name: " + std::string(100000, '[') + std::string(100000, ']') + "\n";
  auto r = load_text(text);
  EXPECT_FALSE(r.kernel);
  ASSERT_FALSE(r.diags.all().empty());
  EXPECT_EQ(r.diags.all()[0].kind, support::ErrorKind::yaml_syntax);
}

}  // namespace
}  // namespace mtlgen::spec::testing
