// The front end on the shipped rms_norm spec: everything validate_kernel derives, and where the IR
// says things came from. Also the printed form of a diagnostic.
#include "spec_test_util.h"

#include <fmt/format.h>

#include <set>

#include "spec/names.h"
#include "support/hash.h"

namespace mtlgen::spec::testing {
namespace {

const fs::path kRmsNorm = source_dir() / "specs/rms_norm.yaml";

class RmsNorm : public ::testing::Test {
 protected:
  void SetUp() override {
    kernel_ = load_spec(kRmsNorm.string(), "specs/rms_norm.yaml", diags_);
    ASSERT_TRUE(kernel_.has_value()) << diags_.format_all();
    ASSERT_TRUE(diags_.all().empty()) << diags_.format_all();
  }
  const ir::Kernel& k() const { return *kernel_; }

  // 1-based line of the first line equal to `text` in the spec file.
  static int line_of(const std::string& text) {
    std::istringstream in(read_text(kRmsNorm));
    int n = 0;
    for (std::string line; std::getline(in, line);) {
      ++n;
      if (line == text) return n;
    }
    return 0;
  }

  support::Diagnostics diags_;
  std::optional<ir::Kernel> kernel_;
};

TEST_F(RmsNorm, NameSummaryAndHash) {
  EXPECT_EQ(k().name, "rms_norm");
  EXPECT_EQ(k().name_loc.line, line_of("name: rms_norm"));
  EXPECT_EQ(k().name_loc.column, 7);
  EXPECT_NE(k().summary.find("accumulated in f32"), std::string::npos);
  EXPECT_EQ(k().spec_path, "specs/rms_norm.yaml");
  EXPECT_EQ(k().spec_hash.size(), 16u);
  EXPECT_EQ(k().params_struct_name(), "rms_norm_params");
}

TEST_F(RmsNorm, DimsTunablesTypes) {
  ASSERT_EQ(k().type_params.size(), 1u);
  EXPECT_EQ(k().type_params[0].types,
            (std::vector<ir::ScalarType>{ir::ScalarType::f32, ir::ScalarType::f16, ir::ScalarType::bf16}));
  ASSERT_EQ(k().dims.size(), 2u);
  EXPECT_EQ(k().dims[0].name, "rows");
  EXPECT_EQ(k().dims[0].min, 1);
  EXPECT_FALSE(k().dims[0].max);
  EXPECT_EQ(k().dims[1].max, 1048576);
  EXPECT_EQ(k().dims[1].multiple_of, 1);
  ASSERT_EQ(k().tunables.size(), 1u);
  EXPECT_EQ(k().tunables[0].values, (std::vector<int64_t>{32, 64, 128, 256, 512, 1024}));
  EXPECT_EQ(k().tunables[0].default_value, 512);
}

TEST_F(RmsNorm, BufferIndicesAndParams) {
  ASSERT_EQ(k().buffers.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(k().buffers[i].index, i) << k().buffers[i].name;
    EXPECT_FALSE(k().buffers[i].explicit_index);
    EXPECT_TRUE(k().buffers[i].host_visible);
  }
  EXPECT_EQ(k().buffers[0].name, "x");
  EXPECT_EQ(k().buffers[2].name, "out");
  EXPECT_TRUE(k().buffers[2].is_output());
  EXPECT_FALSE(k().buffers[0].is_output());
  EXPECT_EQ(k().buffers[0].shape.size(), 2u);
  EXPECT_EQ(k().params_index, 3);
  // The parameter struct: every dim (uint) in order, then every scalar.
  ASSERT_EQ(k().params_fields.size(), 3u);
  EXPECT_EQ(k().params_fields[0].name, "rows");
  EXPECT_EQ(k().params_fields[0].type, ir::ScalarType::u32);
  EXPECT_TRUE(k().params_fields[0].is_dim);
  EXPECT_EQ(k().params_fields[1].name, "n");
  EXPECT_EQ(k().params_fields[2].name, "eps");
  EXPECT_EQ(k().params_fields[2].type, ir::ScalarType::f32);
  EXPECT_FALSE(k().params_fields[2].is_dim);
  EXPECT_DOUBLE_EQ(k().scalars[0].default_value, 1.0e-6);
  // Only what the body reads is unpacked from the struct.
  EXPECT_EQ(k().params_used_in_body, (std::set<std::string>{"n", "eps"}));
}

TEST_F(RmsNorm, BindingTableOrder) {
  using Kind = ir::KernelParam::Kind;
  const auto& p = k().params;
  ASSERT_EQ(p.size(), 3u + 1u + 1u + 4u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(p[i].kind, Kind::buffer);
    EXPECT_EQ(p[i].ref, static_cast<size_t>(i));
    EXPECT_EQ(p[i].index, i);
  }
  EXPECT_EQ(p[3].kind, Kind::params);
  EXPECT_EQ(p[3].index, 3);
  EXPECT_EQ(p[4].kind, Kind::threadgroup_array);
  EXPECT_EQ(p[4].index, 0);
  // Builtins last, in the fixed order of ir::Builtin, only those the body uses.
  std::vector<ir::Builtin> builtins;
  for (size_t i = 5; i < p.size(); ++i) {
    EXPECT_EQ(p[i].kind, Kind::builtin);
    builtins.push_back(p[i].builtin);
  }
  EXPECT_EQ(builtins, (std::vector<ir::Builtin>{ir::Builtin::threadgroup_position_in_grid,
                                                ir::Builtin::thread_index_in_threadgroup,
                                                ir::Builtin::thread_index_in_simdgroup,
                                                ir::Builtin::simdgroup_index_in_threadgroup}));
}

TEST_F(RmsNorm, BuiltinsAndHelpersUsed) {
  EXPECT_EQ(k().builtins_used, (std::set<ir::Builtin>{ir::Builtin::threadgroup_position_in_grid,
                                                      ir::Builtin::thread_index_in_threadgroup,
                                                      ir::Builtin::thread_index_in_simdgroup,
                                                      ir::Builtin::simdgroup_index_in_threadgroup}));
  EXPECT_EQ(k().helpers_used, (std::set<ir::Helper>{ir::Helper::tg_sum}));
}

TEST_F(RmsNorm, Variants) {
  const auto& v = k().variants;
  ASSERT_EQ(v.size(), 18u);
  std::vector<std::string> names;
  for (const auto& x : v) names.push_back(x.entry_point);
  std::vector<std::string> expected;
  for (const char* t : {"f32", "f16", "bf16"}) {
    for (int tg : {32, 64, 128, 256, 512, 1024}) expected.push_back(fmt::format("rms_norm_{}_tg{}", t, tg));
  }
  EXPECT_EQ(names, expected);
  EXPECT_EQ(v.front().entry_point, "rms_norm_f32_tg32");
  EXPECT_EQ(v.back().entry_point, "rms_norm_bf16_tg1024");
  int defaults = 0;
  for (const auto& x : v) {
    int64_t tg = x.tunables.at("TG");
    EXPECT_EQ(x.threads_per_threadgroup, tg);
    EXPECT_EQ(x.threadgroup_shape, (std::vector<int64_t>{tg}));
    // partials: TG / 32 floats.
    EXPECT_EQ(x.threadgroup_array_bytes, (std::vector<int64_t>{tg / 32 * 4})) << x.entry_point;
    EXPECT_EQ(x.is_default_tuning, tg == 512) << x.entry_point;
    defaults += x.is_default_tuning;
  }
  EXPECT_EQ(defaults, 3);
  EXPECT_EQ(k().default_variant_for({{"T", ir::ScalarType::f16}}).entry_point, "rms_norm_f16_tg512");
}

TEST_F(RmsNorm, MslVersionFollowsBfloat) { EXPECT_EQ(k().msl_version, "3.1"); }

TEST_F(RmsNorm, BodyAndReferenceLocations) {
  int body = line_of("body: |");
  ASSERT_GT(body, 0);
  EXPECT_EQ(k().body.loc.file, "specs/rms_norm.yaml");
  EXPECT_EQ(k().body.loc.line, body + 1);  // the first body line, not the `body: |` line
  EXPECT_EQ(k().body.loc.column, 3);
  EXPECT_EQ(k().body.text.rfind("device const T* x_row = x + size_t(tgid) * n;\n", 0), 0u);
  EXPECT_EQ(k().reference.loc.line, line_of("reference: |") + 1);
  EXPECT_EQ(k().reference.text.rfind("for (int64_t r = 0; r < rows; ++r) {", 0), 0u);
}

TEST_F(RmsNorm, ExpressionLocations) {
  // threads_per_threadgroup: [TG]  -> the `TG` inside the brackets.
  const auto& tpt = k().dispatch.threads_per_threadgroup;
  ASSERT_EQ(tpt.size(), 1u);
  EXPECT_EQ(tpt[0].loc.line, line_of("  threads_per_threadgroup: [TG]"));
  EXPECT_EQ(tpt[0].loc.column, 29);
  EXPECT_EQ(expr::to_source(k().threadgroup_arrays[0].count), "TG / 32");
  ASSERT_TRUE(k().cost.bytes_read);
  EXPECT_EQ(expr::to_source(*k().cost.bytes_read), "(rows * n + n) * sizeof(T)");
}

TEST_F(RmsNorm, Tests) {
  EXPECT_EQ(k().tests.seed, 7u);
  EXPECT_EQ(k().tests.cases.size(), 9u);  // two of them benchmark only
  EXPECT_EQ(k().tests.cases[0].name, "one");
  EXPECT_EQ(k().tests.tolerances.size(), 3u);
  EXPECT_EQ(k().tests.tolerances.at(ir::ScalarType::bf16).max_rel, 8.0e-3);
  EXPECT_EQ(k().tests.default_fill.dist, ir::Distribution::normal);
  const auto& c = k().tests.cases[5];
  EXPECT_EQ(c.name, "large_values");
  EXPECT_EQ(c.inputs.at("x").dist, ir::Distribution::uniform);
  EXPECT_EQ(c.inputs.at("x").a, -200);
  EXPECT_EQ(c.scalars.at("eps"), 1.0e-5);
}

// ---- diagnostics as printed ----

TEST(DiagnosticFormat, FileLineColErrorQuoteCaretHint) {
  support::Diagnostics diags;
  auto k = load_spec((spec_test_dir() / "rejects/unknown_nested_key.yaml").string(), "spec.yaml", diags);
  EXPECT_FALSE(k);
  ASSERT_EQ(diags.all().size(), 1u) << diags.format_all();
  EXPECT_EQ(diags.format(diags.all()[0]),
            "spec.yaml:4:15: error: unknown key `maxx` in dim `n`\n"
            "    n: {min: 1, maxx: 4096}\n"
            "                ^\n"
            "  hint: did you mean `max`?\n");
  EXPECT_EQ(diags.format_all(), diags.format(diags.all()[0]));
}

TEST(DiagnosticFormat, EveryErrorOfOnePassIsReported) {
  std::string text = kMinimalSpec;
  text.replace(text.find("n: {min: 1}"), 11, "n: {min: 1, maxx: 2, mni: 0}");
  text.replace(text.find("access: write"), 13, "access: write, idx: 1");
  auto r = load_text(text);
  EXPECT_FALSE(r.kernel);
  EXPECT_EQ(r.diags.error_count(), 3) << r.diags.format_all();
}

TEST(DiagnosticFormat, WithoutSourceThereIsNoQuote) {
  support::Diagnostics diags;
  diags.error(support::ErrorKind::bad_value, {"other.yaml", 2, 5}, "message", "do this");
  EXPECT_EQ(diags.format(diags.all()[0]), "other.yaml:2:5: error: message\n  hint: do this\n");
  diags.warning(support::ErrorKind::bad_value, {"other.yaml", 2, 0}, "careful");
  EXPECT_EQ(diags.format(diags.all()[1]), "other.yaml:2: warning: careful\n");
  EXPECT_EQ(diags.error_count(), 1);
}

TEST(DiagnosticFormat, MissingFileIsAnIoError) {
  support::Diagnostics diags;
  auto k = load_spec("/nonexistent/dir/spec.yaml", "spec.yaml", diags);
  EXPECT_FALSE(k);
  ASSERT_EQ(diags.all().size(), 1u);
  EXPECT_EQ(diags.all()[0].kind, support::ErrorKind::io);
  EXPECT_EQ(diags.all()[0].loc.file, "spec.yaml");
  EXPECT_FALSE(diags.all()[0].hint.empty());
}

// ---- the identifier rules ----

TEST(ReservedNames, OneFromEachList) {
  EXPECT_STREQ(reserved_by("class"), "C++");
  EXPECT_STREQ(reserved_by("kernel"), "MSL");
  EXPECT_STREQ(reserved_by("threadgroup"), "MSL");
  EXPECT_STREQ(reserved_by("self"), "Objective-C");
  EXPECT_STREQ(reserved_by("params"), "mtlgen");
  EXPECT_STREQ(reserved_by("mtlgen_x"), "mtlgen");
  EXPECT_STREQ(reserved_by("__x"), "mtlgen");
  EXPECT_NE(reserved_by("gid"), nullptr);
  EXPECT_NE(reserved_by("tg_argmax"), nullptr);
  EXPECT_NE(reserved_by("value_index"), nullptr);
  EXPECT_EQ(reserved_by("rows"), nullptr);
  EXPECT_EQ(reserved_by("x"), nullptr);
  EXPECT_EQ(reserved_by("partials"), nullptr);
}

// Better hints (generator/spec/spec_validator.cpp, check_symbol): when the name is declared but not
// allowed in this place, the hint suggests a look-alike (`did you mean \`n\`?` for a scalar `eps`
// in a precondition) instead of saying what the place may use.
TEST(Hints, DeclaredNameInTheWrongPlaceSaysWhatIsAllowed) {
  support::Diagnostics diags;
  load_spec((spec_test_dir() / "rejects/scalar_in_precondition.yaml").string(), "spec.yaml", diags);
  ASSERT_EQ(diags.all().size(), 1u);
  EXPECT_EQ(diags.all()[0].hint.find("did you mean"), std::string::npos) << diags.all()[0].hint;
  EXPECT_NE(diags.all()[0].hint.find("dims"), std::string::npos) << diags.all()[0].hint;
}

}  // namespace
}  // namespace mtlgen::spec::testing

namespace mtlgen::spec::testing {
namespace {

TEST(MslVersion, ThreeZeroWithoutBfloat) {
  auto r = load_text(kMinimalSpec);
  ASSERT_TRUE(r.kernel) << r.diags.format_all();
  EXPECT_EQ(r.kernel->msl_version, "3.0");
}

TEST(MslVersion, BfloatThreadgroupArrayNeedsThreeOne) {
  std::string text = kMinimalSpec;
  text.replace(text.find("dispatch:"), 9, "threadgroup_memory:\n  tile: {type: bfloat, count: TG}\ndispatch:");
  auto r = load_text(text);
  ASSERT_TRUE(r.kernel) << r.diags.format_all();
  EXPECT_EQ(r.kernel->msl_version, "3.1");
}

// A concrete `bfloat` anywhere in the signature needs MSL 3.1, not only in a type parameter.
TEST(MslVersion, ConcreteBfloatBufferNeedsThreeOne) {
  std::string text = kMinimalSpec;
  text.replace(text.find("x: {type: float"), 15, "x: {type: bfloat");
  auto r = load_text(text);
  ASSERT_TRUE(r.kernel) << r.diags.format_all();
  EXPECT_EQ(r.kernel->msl_version, "3.1");
}

// kMinimalSpec with two type parameters and two tunables: 2 x 2 x 2 variants.
std::string two_types_two_tunables() {
  std::string text = kMinimalSpec;
  text.replace(text.find("dims:"), 5, "types:\n  T: [half, int8]\n  U: [uint32]\ndims:");
  text.replace(text.find("  TG: {values: [32, 64], default: 32}"), 37,
               "  TG: {values: [32, 64], default: 64}\n  Rows_Per: {values: [1, 4], default: 4}");
  return text;
}

TEST(Variants, EntryPointsFollowTypeThenTunableOrder) {
  auto r = load_text(two_types_two_tunables());
  ASSERT_TRUE(r.kernel) << r.diags.format_all();
  std::vector<std::string> names;
  for (const auto& v : r.kernel->variants) names.push_back(v.entry_point);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "scale_f16_u32_tg32_rows_per1", "scale_f16_u32_tg32_rows_per4", "scale_f16_u32_tg64_rows_per1",
                       "scale_f16_u32_tg64_rows_per4", "scale_i8_u32_tg32_rows_per1", "scale_i8_u32_tg32_rows_per4",
                       "scale_i8_u32_tg64_rows_per1", "scale_i8_u32_tg64_rows_per4"}));
  int defaults = 0;
  for (const auto& v : r.kernel->variants) defaults += v.is_default_tuning;
  EXPECT_EQ(defaults, 2);
  EXPECT_EQ(r.kernel->default_variant_for({{"T", ir::ScalarType::i8}, {"U", ir::ScalarType::u32}}).entry_point,
            "scale_i8_u32_tg64_rows_per4");
}

// `verify --variant each`: every tuning at the first types, every type at its default tuning.
TEST(Variants, EachSelectsEveryTuningOnceAndEveryTypeOnce) {
  auto r = load_text(two_types_two_tunables());
  ASSERT_TRUE(r.kernel) << r.diags.format_all();
  auto selected = [&](ir::VariantSelection s) {
    std::vector<std::string> names;
    for (const auto& v : r.kernel->variants) {
      if (r.kernel->selects(s, v)) names.push_back(v.entry_point);
    }
    return names;
  };
  EXPECT_EQ(selected(ir::VariantSelection::each),
            (std::vector<std::string>{"scale_f16_u32_tg32_rows_per1", "scale_f16_u32_tg32_rows_per4",
                                      "scale_f16_u32_tg64_rows_per1", "scale_f16_u32_tg64_rows_per4",
                                      "scale_i8_u32_tg64_rows_per4"}));
  EXPECT_EQ(selected(ir::VariantSelection::defaults),
            (std::vector<std::string>{"scale_f16_u32_tg64_rows_per4", "scale_i8_u32_tg64_rows_per4"}));
  EXPECT_EQ(selected(ir::VariantSelection::all).size(), 8u);
}

TEST(Variants, NoTypesNoTunablesIsOneVariant) {
  std::string text = kMinimalSpec;
  text.replace(text.find("tunables:\n  TG: {values: [32, 64], default: 32}\n"), 47, "");
  text.replace(text.find("[\"ceil_div(n, TG)\"]"), 19, "[\"ceil_div(n, 32)\"]");
  text.replace(text.find("[TG]"), 4, "[32]");
  auto r = load_text(text);
  ASSERT_TRUE(r.kernel) << r.diags.format_all();
  ASSERT_EQ(r.kernel->variants.size(), 1u);
  EXPECT_EQ(r.kernel->variants[0].entry_point, "scale");
  EXPECT_TRUE(r.kernel->variants[0].is_default_tuning);
}

TEST(Bindings, ExplicitIndicesAndParamsSlot) {
  std::string text = kMinimalSpec;
  text.replace(text.find("access: read}"), 13, "access: read, index: 0}");
  text.replace(text.find("access: write}"), 14, "access: write, index: 1}");
  auto r = load_text(text);
  ASSERT_TRUE(r.kernel) << r.diags.format_all();
  EXPECT_EQ(r.kernel->params_index, 2);
  text = kMinimalSpec;
  text.replace(text.find("access: read}"), 13, "access: read, index: 1}");
  r = load_text(text);
  ASSERT_TRUE(r.kernel) << r.diags.format_all();
  EXPECT_EQ(r.kernel->buffers[0].index, 1);
  EXPECT_EQ(r.kernel->buffers[1].index, 0);  // the lowest free index
  EXPECT_EQ(r.kernel->params_index, 2);
}

TEST(Bindings, BuiltinsOnlyWhenUsedAndNotInComments) {
  std::string text = kMinimalSpec;
  text.replace(text.find("  if (gid < n)"), 2, "  // simd_lane and tg_size in a comment, \"lid\" in a string\n  ");
  auto r = load_text(text);
  ASSERT_TRUE(r.kernel) << r.diags.format_all();
  EXPECT_EQ(r.kernel->builtins_used, (std::set<ir::Builtin>{ir::Builtin::thread_position_in_grid}));
  EXPECT_TRUE(r.kernel->helpers_used.empty());
}

TEST(Bindings, TgArgmaxPullsInArgmaxCombine) {
  std::string text = kMinimalSpec;
  text.replace(text.find("  if (gid < n)"), 2,
               "  value_index best = {x[gid], gid};\n  best = tg_argmax<TG>(best, v, ix, simd_lane, simd_group);\n  ");
  text.replace(text.find("dispatch:"), 9,
               "threadgroup_memory:\n  v: {type: float, count: TG / 32}\n  ix: {type: uint32, count: TG / 32}\ndispatch:");
  auto r = load_text(text);
  ASSERT_TRUE(r.kernel) << r.diags.format_all();
  EXPECT_EQ(r.kernel->helpers_used, (std::set<ir::Helper>{ir::Helper::argmax_combine, ir::Helper::tg_argmax}));
  ASSERT_EQ(r.kernel->variants[1].threadgroup_array_bytes, (std::vector<int64_t>{8, 8}));
}

}  // namespace
}  // namespace mtlgen::spec::testing

namespace mtlgen::spec::testing {
namespace {

// `check a.yaml b.yaml` shares one Diagnostics: an error in a.yaml once made b.yaml skip its
// variants and come back "valid" with none (each spec now counts only its own errors).
TEST(FrontEnd, ASpecAfterARejectedOneIsBuiltInFull) {
  TempDir dir;
  support::Diagnostics diags;
  std::string bad = kMinimalSpec;
  bad.replace(bad.find("name: scale"), 11, "name: 1scale");
  EXPECT_FALSE(load_spec(dir.write("bad.yaml", bad).string(), "bad.yaml", diags));
  ASSERT_TRUE(diags.has_errors());
  auto good = load_spec(dir.write("good.yaml", kMinimalSpec).string(), "good.yaml", diags);
  ASSERT_TRUE(good);
  EXPECT_EQ(good->variants.size(), 2u);
  EXPECT_EQ(good->msl_version, "3.0");
}

}  // namespace
}  // namespace mtlgen::spec::testing

namespace mtlgen::spec::testing {
namespace {

// kMinimalSpec with its reference continued in `include` (a path relative to the spec's folder).
std::string spec_including(const std::string& include) {
  std::string text = kMinimalSpec;
  const std::string tests = "tests:\n";
  text.insert(text.find(tests), "reference_include: " + include + "\n");
  return text;
}

// The included file is read into the IR, located at its own line 1 under the folder the spec is
// shown in; its bytes are part of the spec's hash, and a family's own kernels share that hash.
TEST(ReferenceInclude, ReadAndHashed) {
  TempDir dir;
  fs::create_directories(dir.path() / "shared");
  dir.write("shared/end.inc", "// end\n");
  const fs::path spec = dir.write("spec.yaml", spec_including("shared/end.inc"));
  support::Diagnostics diags;
  auto before = load_spec(spec.string(), "specs/spec.yaml", diags);
  ASSERT_TRUE(before) << diags.format_all();
  EXPECT_EQ(before->reference_include.path, "shared/end.inc");
  EXPECT_EQ(before->reference_include.code.text, "// end\n");
  EXPECT_EQ(before->reference_include.code.loc.file, "specs/shared/end.inc");
  EXPECT_EQ(before->reference_include.code.loc.line, 1);
  EXPECT_EQ(before->reference_include.path_loc.file, "specs/spec.yaml");
  EXPECT_EQ(before->reference_include.path_loc.column, 20);

  auto again = load_spec(spec.string(), "specs/spec.yaml", diags);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->spec_hash, before->spec_hash);  // the same bytes, the same hash
  dir.write("shared/end.inc", "// the end\n");
  auto after = load_spec(spec.string(), "specs/spec.yaml", diags);
  ASSERT_TRUE(after) << diags.format_all();
  EXPECT_NE(after->spec_hash, before->spec_hash);
  EXPECT_EQ(after->spec_hash.size(), 16u);

  // Without the key the hash is the file's alone, as before the key existed.
  auto plain = load_spec(dir.write("plain.yaml", kMinimalSpec).string(), "plain.yaml", diags);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->spec_hash, support::hash_hex(kMinimalSpec));
  EXPECT_FALSE(diags.has_errors()) << diags.format_all();
}

// The family's reference and its own kernels' may include files, from the family's folder.
TEST(ReferenceInclude, FamilyMembersShareTheFamilysHash) {
  const fs::path family = source_dir() / "tests/spec/accepts/family_two_passes.yaml";
  std::string text = read_text(family);
  text.insert(text.find("\ntests:\n") + 1, "reference_include: end.inc\n");
  text.insert(text.find("\n    tests:\n") + 1, "    reference_include: shared/member_end.inc\n");  // `doubled`'s
  TempDir dir;
  dir.write("end.inc", "// nothing more\n");
  fs::create_directories(dir.path() / "shared");
  dir.write("shared/member_end.inc", "// nothing more for the member\n");
  support::Diagnostics diags;
  auto k = load_spec(dir.write("family.yaml", text).string(), "family.yaml", diags);
  ASSERT_TRUE(k) << diags.format_all();
  ASSERT_TRUE(k->is_family());
  EXPECT_EQ(k->reference_include.code.text, "// nothing more\n");
  ASSERT_EQ(k->family->kernels.at(0).name, "doubled");
  EXPECT_EQ(k->family->kernels.at(0).reference_include.code.text, "// nothing more for the member\n");
  EXPECT_EQ(k->family->kernels.at(0).reference_include.code.loc.file, "shared/member_end.inc");
  EXPECT_NE(k->spec_hash, support::hash_hex(text));
  for (const auto& m : k->family->kernels) EXPECT_EQ(m.spec_hash, k->spec_hash) << m.name;
}

// A link inside the folder that leads out of it is refused as `..` is.
TEST(ReferenceInclude, LinkOutOfTheFolderIsRefused) {
  TempDir outside;
  outside.write("secret.inc", "// not the spec's\n");
  TempDir dir;
  fs::create_symlink(outside.path() / "secret.inc", dir.path() / "end.inc");
  support::Diagnostics diags;
  auto k = load_spec(dir.write("spec.yaml", spec_including("end.inc")).string(), "spec.yaml", diags);
  EXPECT_FALSE(k);
  ASSERT_EQ(diags.error_count(), 1) << diags.format_all();
  const support::Diagnostic& d = diags.all().front();
  EXPECT_EQ(d.kind, support::ErrorKind::bad_value);
  EXPECT_EQ(d.loc.file, "spec.yaml");
  EXPECT_EQ(d.loc.column, 20);
  EXPECT_NE(d.message.find("resolves outside the spec's folder"), std::string::npos) << d.message;
}

// The included file follows the include policy, reported at its own line, and the size limit.
TEST(ReferenceInclude, IncludePolicyAndSizeLimit) {
  TempDir dir;
  dir.write("end.inc", "// reads the host's files\n#include </etc/passwd>\n");
  const fs::path spec = dir.write("spec.yaml", spec_including("end.inc"));
  support::Diagnostics diags;
  EXPECT_FALSE(load_spec(spec.string(), "spec.yaml", diags));
  ASSERT_EQ(diags.error_count(), 1) << diags.format_all();
  EXPECT_EQ(diags.all().front().kind, support::ErrorKind::msl_syntax);
  EXPECT_EQ(diags.all().front().loc.file, "end.inc");
  EXPECT_EQ(diags.all().front().loc.line, 2);
  EXPECT_NE(diags.format_all().find("#include </etc/passwd>"), std::string::npos) << "the line is quoted";

  dir.write("end.inc", std::string(1500, '/') + "\n");
  YamlLimits limits;
  limits.max_file_bytes = 1000;  // the spec fits, the file it includes does not
  support::Diagnostics small;
  EXPECT_FALSE(load_spec(spec.string(), "spec.yaml", small, limits));
  ASSERT_EQ(small.error_count(), 1) << small.format_all();
  EXPECT_EQ(small.all().front().kind, support::ErrorKind::file_too_large);
  EXPECT_EQ(small.all().front().loc.file, "spec.yaml");
}

}  // namespace
}  // namespace mtlgen::spec::testing
