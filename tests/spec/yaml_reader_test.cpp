// The typed YAML reader: where values, keys and expressions are located, aliases included, and how
// deep nesting is reported.
#include "spec_test_util.h"

#include "spec/yaml_reader.h"

namespace mtlgen::spec::testing {
namespace {

struct Read {
  std::optional<YAML::Node> root;
  std::string text;
  support::Diagnostics diags;
};

std::unique_ptr<Read> read_yaml(const std::string& text, const YamlLimits& limits = {}) {
  TempDir dir;
  auto r = std::make_unique<Read>();
  r->root = load_yaml(dir.write("spec.yaml", text).string(), "spec.yaml", limits, r->diags, &r->text);
  return r;
}

std::string at(const SourceLoc& l) { return std::to_string(l.line) + ":" + std::to_string(l.column); }

TEST(YamlReader, AliasIsLocatedWhereItIsUsed) {
  auto r = read_yaml("a: &v [1, {k: 2}]\nb: x\nc:   *v\n");
  ASSERT_TRUE(r->root) << r->diags.format_all();
  YamlContext ctx("spec.yaml", r->text, r->diags);
  const YAML::Node& root = *r->root;
  EXPECT_EQ(at(ctx.loc(root["a"])), "1:4");  // the anchor's own use keeps its place
  EXPECT_EQ(at(ctx.loc(root["c"])), "3:6");  // the `*v`
  EXPECT_EQ(at(ctx.loc(root["c"][0])), "3:6");
  EXPECT_EQ(at(ctx.loc(root["c"][1]["k"])), "3:6");
  EXPECT_EQ(at(ctx.loc(root["a"][1]["k"])), "1:15");
  // A copy, not the anchor's node: both stay equal in content.
  EXPECT_FALSE(root["a"].is(root["c"]));
  EXPECT_EQ(root["c"][1]["k"].Scalar(), "2");
}

TEST(YamlReader, AliasInsideAnAliasedNodeIsLocatedAtTheOuterUse) {
  auto r = read_yaml("a: &s 7\nb: &m {x: *s}\nc: [*m]\n");
  ASSERT_TRUE(r->root) << r->diags.format_all();
  YamlContext ctx("spec.yaml", r->text, r->diags);
  EXPECT_EQ(at(ctx.loc((*r->root)["b"]["x"])), "2:11");
  EXPECT_EQ(at(ctx.loc((*r->root)["c"][0]["x"])), "3:5");
}

TEST(YamlReader, DuplicateKeysThroughAnAliasAreKept) {
  auto r = read_yaml("a: &m {k: 1, k: 2}\nb: *m\n");
  ASSERT_TRUE(r->root) << r->diags.format_all();
  EXPECT_EQ((*r->root)["b"].size(), 2u);
}

TEST(YamlReader, ValueLocationSkipsAnchorTagAndQuote) {
  auto r = read_yaml("a: &x n\nb: !!str &y \"n\"\nc: &z\n  n\nd: *x\n");
  ASSERT_TRUE(r->root) << r->diags.format_all();
  YamlContext ctx("spec.yaml", r->text, r->diags);
  const YAML::Node& root = *r->root;
  EXPECT_EQ(at(ctx.value_loc(root["a"])), "1:7");
  EXPECT_EQ(at(ctx.value_loc(root["b"])), "2:14");
  EXPECT_EQ(at(ctx.value_loc(root["c"])), "3:4");  // the value is on the next line: the anchor
  EXPECT_EQ(at(ctx.value_loc(root["d"])), "5:4");
}

TEST(YamlReader, WrittenAsIsOnlyWhenTheTextIsTheValue) {
  auto r = read_yaml("a: &x n + 1\nb: \"n + 1\"\nc: \"n\\t+ 1\"\nd: n\n  + 1\ne: *x\nf: 'n ''+'' 1'\n");
  ASSERT_TRUE(r->root) << r->diags.format_all();
  YamlContext ctx("spec.yaml", r->text, r->diags);
  const YAML::Node& root = *r->root;
  EXPECT_TRUE(ctx.written_as_is(root["a"]));
  EXPECT_TRUE(ctx.written_as_is(root["b"]));
  EXPECT_FALSE(ctx.written_as_is(root["c"]));  // an escape
  EXPECT_FALSE(ctx.written_as_is(root["d"]));  // folded over two lines
  EXPECT_FALSE(ctx.written_as_is(root["e"]));  // an alias
  EXPECT_FALSE(ctx.written_as_is(root["f"]));  // a doubled quote
}

TEST(YamlReader, ExpressionErrorsThroughAnAliasAreAtTheAlias) {
  auto r = read_yaml("a: &e \"n + )\"\nb: [*e]\nc: \"n\\t+ )\"\nd: n + )\n");
  ASSERT_TRUE(r->root) << r->diags.format_all();
  YamlContext ctx("spec.yaml", r->text, r->diags);
  const YAML::Node& root = *r->root;
  for (const YAML::Node& n : {root["a"], root["b"][0], root["c"], root["d"]}) EXPECT_FALSE(ctx.expression(n));
  ASSERT_EQ(r->diags.all().size(), 4u) << r->diags.format_all();
  EXPECT_EQ(at(r->diags.all()[0].loc), "1:12");  // at the `)` after the anchor
  EXPECT_EQ(at(r->diags.all()[1].loc), "2:5");   // at the `*e`, not 4 columns past it
  EXPECT_EQ(at(r->diags.all()[2].loc), "3:5");   // escaped text: the value's start
  EXPECT_EQ(at(r->diags.all()[3].loc), "4:8");
}

TEST(YamlReader, AliasInsideItsOwnAnchorIsAnError) {
  auto r = read_yaml("name: x\na: &s [1, *s]\n");
  EXPECT_FALSE(r->root);
  ASSERT_EQ(r->diags.all().size(), 1u) << r->diags.format_all();
  const auto& d = r->diags.all()[0];
  EXPECT_EQ(d.kind, support::ErrorKind::alias_limit);
  EXPECT_EQ(at(d.loc), "2:11");
  EXPECT_NE(d.message.find("`*s`"), std::string::npos) << d.message;
  EXPECT_FALSE(d.hint.empty());
}

TEST(YamlReader, UndefinedAliasIsASyntaxErrorWithAHint) {
  auto r = read_yaml("name: x\na: *nowhere\n");
  EXPECT_FALSE(r->root);
  ASSERT_EQ(r->diags.all().size(), 1u) << r->diags.format_all();
  EXPECT_EQ(r->diags.all()[0].kind, support::ErrorKind::yaml_syntax);
  EXPECT_EQ(at(r->diags.all()[0].loc), "2:4");
  EXPECT_FALSE(r->diags.all()[0].hint.empty());
}

// Block nesting (one level per line, or `- - - x` many per line) is reported as nesting, at the
// node that opens level 65, never as "more than 100000 YAML nodes" or yaml-cpp's "bad file".
TEST(YamlReader, DeepBlockNestingIsReportedAsNesting) {
  std::string text = "name: x\ndims:\n";
  for (int i = 0; i < 70; ++i) text += std::string(2 * size_t(i + 1), ' ') + "k:\n";
  auto r = read_yaml(text);
  EXPECT_FALSE(r->root);
  ASSERT_EQ(r->diags.all().size(), 1u) << r->diags.format_all();
  const auto& d = r->diags.all()[0];
  EXPECT_EQ(d.kind, support::ErrorKind::yaml_syntax);
  EXPECT_EQ(at(d.loc), "66:129");  // level 1 is the spec, 2 is dims' value, 65 the 64th `k:` line's
  EXPECT_NE(d.message.find("nests deeper than 64 levels"), std::string::npos) << d.message;
}

TEST(YamlReader, DeepCompactSequencesAreReportedAsNesting) {
  for (size_t depth : {65u, 600u, 100000u}) {
    std::string text = "name: x\ndims:\n  ";
    for (size_t i = 0; i < depth; ++i) text += "- ";
    text += "x\n";
    auto r = read_yaml(text);
    EXPECT_FALSE(r->root);
    ASSERT_EQ(r->diags.all().size(), 1u) << r->diags.format_all();
    const auto& d = r->diags.all()[0];
    EXPECT_EQ(at(d.loc), "3:" + std::to_string(3 + 2 * 63)) << depth;
    EXPECT_NE(d.message.find("nests deeper than 64 levels"), std::string::npos) << d.message;
  }
}

TEST(YamlReader, NestingThroughAnAliasIsBounded) {
  std::string deep = "a: &d ";
  for (int i = 0; i < 40; ++i) deep += "[";
  deep += std::string(40, ']') + "\nb: ";
  for (int i = 0; i < 30; ++i) deep += "[";
  deep += "*d" + std::string(30, ']') + "\n";
  auto r = read_yaml(deep);
  EXPECT_FALSE(r->root);
  ASSERT_EQ(r->diags.all().size(), 1u) << r->diags.format_all();
  EXPECT_EQ(at(r->diags.all()[0].loc), "2:34");  // the alias that would nest 71 deep
  EXPECT_NE(r->diags.all()[0].message.find("nests deeper"), std::string::npos);
}

}  // namespace
}  // namespace mtlgen::spec::testing
