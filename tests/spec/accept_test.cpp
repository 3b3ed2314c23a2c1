// Specs under accepts/ must load with no diagnostic at all; the shipped specs/*.yaml too.
// A first line `# accept...; known-bug: <what>` marks a spec the front end wrongly rejects today.
#include "spec_test_util.h"

#include <cmath>

namespace mtlgen::spec::testing {
namespace accept_test {  // named: unity builds (tests/CMakeLists.txt)

struct AcceptCase {
  std::string name;
  fs::path path;
  bool known_bug = false;
};

void PrintTo(const AcceptCase& c, std::ostream* os) { *os << c.path.filename().string(); }

std::vector<AcceptCase> accept_cases(bool known_bug) {
  std::vector<AcceptCase> out;
  auto add = [&](const fs::path& path, const std::string& name) {
    bool bug = first_line(path).find("known-bug:") != std::string::npos;
    if (bug == known_bug) out.push_back({name, path, bug});
  };
  for (const auto& p : yaml_files(spec_test_dir() / "accepts")) add(p, p.stem().string());
  for (const auto& p : yaml_files(source_dir() / "specs")) add(p, "shipped_" + p.stem().string());
  return out;
}

std::string case_name(const ::testing::TestParamInfo<AcceptCase>& info) { return info.param.name; }

void expect_accepted(const AcceptCase& c) {
  support::Diagnostics diags;
  auto kernel = load_spec(c.path.string(), c.path.filename().string(), diags);
  EXPECT_TRUE(kernel.has_value());
  EXPECT_TRUE(diags.all().empty()) << diags.format_all();
  if (!kernel) return;
  EXPECT_FALSE(kernel->variants.empty());
  if (kernel->is_family()) {  // no MSL of its own: its kernels have the bindings
    EXPECT_FALSE(kernel->family->dispatches.empty());
    for (const auto& m : kernel->family->kernels) {
      EXPECT_FALSE(m.params.empty()) << m.name;
      EXPECT_GE(m.params_index, 0) << m.name;
    }
    return;
  }
  EXPECT_FALSE(kernel->params.empty());
  EXPECT_GE(kernel->params_index, 0);
}

class Accept : public ::testing::TestWithParam<AcceptCase> {};
TEST_P(Accept, LoadsWithoutDiagnostics) { expect_accepted(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Spec, Accept, ::testing::ValuesIn(accept_cases(false)), case_name);

class AcceptKnownBug : public ::testing::TestWithParam<AcceptCase> {};
TEST_P(AcceptKnownBug, DISABLED_LoadsWithoutDiagnostics) { expect_accepted(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Spec, AcceptKnownBug, ::testing::ValuesIn(accept_cases(true)), case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AcceptKnownBug);

TEST(AcceptFolder, ShipsAtLeastRmsNorm) {
  auto cases = accept_cases(false);
  EXPECT_TRUE(std::any_of(cases.begin(), cases.end(), [](const AcceptCase& c) { return c.name == "shipped_rms_norm"; }));
}

// every_key.yaml uses every key; check the parts of the IR that only it exercises.
TEST(AcceptEveryKey, FillsEveryPartOfTheIr) {
  support::Diagnostics diags;
  auto k = load_spec((spec_test_dir() / "accepts/every_key.yaml").string(), "every_key.yaml", diags);
  ASSERT_TRUE(k) << diags.format_all();
  EXPECT_EQ(k->type_params.size(), 2u);
  EXPECT_EQ(k->preconditions.size(), 2u);
  EXPECT_EQ(k->preconditions[1].message, "n is a multiple of 32");
  ASSERT_EQ(k->buffers.size(), 4u);
  // explicit index 4 for `mask`; the others take the lowest free slots in declaration order.
  EXPECT_EQ(k->buffers[0].index, 0);
  EXPECT_EQ(k->buffers[1].index, 4);
  EXPECT_TRUE(k->buffers[1].explicit_index);
  EXPECT_FALSE(k->buffers[1].host_visible);
  EXPECT_EQ(k->buffers[2].index, 1);
  EXPECT_EQ(k->buffers[2].access, ir::Access::read_write);
  EXPECT_EQ(k->buffers[3].index, 2);
  EXPECT_EQ(k->params_index, 3);
  ASSERT_EQ(k->scalars.size(), 3u);
  EXPECT_EQ(k->scalars[1].type, ir::ScalarType::i32);
  EXPECT_EQ(k->scalars[1].default_value, -2);
  ASSERT_EQ(k->function_constants.size(), 2u);
  EXPECT_EQ(k->function_constants[0].type, ir::ScalarType::boolean);
  EXPECT_EQ(k->function_constants[0].default_value, 1);
  EXPECT_EQ(k->function_constants[1].index, 1);
  ASSERT_EQ(k->threadgroup_arrays.size(), 2u);
  EXPECT_EQ(k->threadgroup_arrays[1].index, 1);
  EXPECT_EQ(k->dispatch.rank(), 2);
  EXPECT_TRUE(k->cost.bytes_read && k->cost.bytes_written && k->cost.flops);
  ASSERT_EQ(k->cost.extra.size(), 2u);
  EXPECT_EQ(k->cost.extra[0].name, "row_bytes");
  EXPECT_EQ(expr::to_source(k->cost.extra[0].value), "n * sizeof(T)");
  EXPECT_EQ(k->cost.extra[1].doc, "the argmax indices");
  EXPECT_EQ(k->cost.formulas().size(), 5u);
  EXPECT_EQ(k->tests.seed, 42u);
  EXPECT_TRUE(k->tests.tolerances.at(ir::ScalarType::u32).exact);
  EXPECT_EQ(k->tests.tolerances.at(ir::ScalarType::f16).nmse, 1.0e-4);
  EXPECT_EQ(k->tests.default_fill.nan_fraction, 0.01);
  EXPECT_EQ(k->tests.default_fill.neg_inf_fraction, 0.01);
  ASSERT_EQ(k->tests.cases.size(), 3u);
  const auto& ties = k->tests.cases[1];
  EXPECT_EQ(ties.seed, 5u);
  EXPECT_EQ(ties.inputs.at("x").dist, ir::Distribution::choice);
  ASSERT_EQ(ties.inputs.at("x").values.size(), 6u);
  EXPECT_TRUE(std::isnan(ties.inputs.at("x").values[3]));
  EXPECT_TRUE(std::isinf(ties.inputs.at("x").values[5]) && ties.inputs.at("x").values[5] < 0);
  EXPECT_EQ(ties.inputs.at("y").dist, ir::Distribution::iota);
  EXPECT_EQ(ties.inputs.at("y").b, 0.5);
  EXPECT_EQ(ties.inputs.at("x").set.at(0), 7.0);
  EXPECT_EQ(ties.scalars.at("count"), 3);
  EXPECT_FALSE(ties.benchmark);
  EXPECT_TRUE(k->tests.cases[2].benchmark);
  // Function constants: tests.constants sweeps use_mask for cases that do not set it; a case's own
  // values replace the plan's; unset constants keep their defaults.
  EXPECT_EQ(k->tests.constants.at("use_mask").values, (std::vector<double>{1, 0}));
  EXPECT_EQ(k->constant_settings(k->tests.cases[0]), (std::vector<ir::ConstantSetting>{{1, 0.5}, {0, 0.5}}));
  EXPECT_EQ(k->constant_settings(ties), (std::vector<ir::ConstantSetting>{{0, 0.25}, {0, -1}}));
  EXPECT_EQ(k->describe(k->constant_settings(ties)[1]), "use_mask=false, bias=-1");
  EXPECT_EQ(k->default_constants(), (ir::ConstantSetting{1, 0.5}));
  EXPECT_EQ(ties.constants.at("bias").value_locs[1].line, ties.constants.at("bias").loc.line);
  // 2 types x 1 type x 2 TG x 2 VEC
  ASSERT_EQ(k->variants.size(), 8u);
  EXPECT_EQ(k->variants.front().entry_point, "every_key_f32_i32_tg32_vec1");
  EXPECT_EQ(k->variants.back().entry_point, "every_key_f16_i32_tg256_vec2");
  // 2-D dispatch: per-dimension builtins become uint2; tgid is used, so it is a parameter.
  EXPECT_TRUE(k->builtins_used.count(ir::Builtin::threadgroup_position_in_grid));
  EXPECT_EQ(ir::builtin_msl_type(ir::Builtin::threadgroup_position_in_grid, k->dispatch.rank()), "uint2");
  EXPECT_EQ(ir::builtin_msl_type(ir::Builtin::thread_index_in_simdgroup, k->dispatch.rank()), "uint");
}

// A precondition over tunables and sizeof(T) is a property of each variant: the front end marks it,
// evaluates it at a variant, and names the variant as messages do.
TEST(AcceptTunableInPrecondition, HoldsPerVariant) {
  support::Diagnostics diags;
  auto k = load_spec((spec_test_dir() / "accepts/tunable_in_precondition.yaml").string(), "tunable_in_precondition.yaml",
                     diags);
  ASSERT_TRUE(k.has_value()) << diags.format_all();
  ASSERT_EQ(k->preconditions.size(), 2u);
  EXPECT_TRUE(k->preconditions[0].per_variant);
  EXPECT_TRUE(k->has_per_variant_preconditions());
  ASSERT_EQ(k->variants.size(), 4u);  // f32 tg32, f32 tg64, f16 tg32, f16 tg64
  const std::map<std::string, int64_t> odd = {{"n", 96}}, long_row = {{"n", 8192 + 64}};
  EXPECT_EQ(k->variant_violation(odd, k->variants[0]), "");
  EXPECT_EQ(k->variant_violation(odd, k->variants[1]), "n must be a multiple of TG");
  // Capacity 256 * TG bytes: 8256 elements exceed it at TG 64 in both types; 4160 fit there in half only.
  EXPECT_EQ(k->variant_violation(long_row, k->variants[1]), "a row fits in the variant's registers");
  EXPECT_EQ(k->variant_violation(long_row, k->variants[3]), "a row fits in the variant's registers");
  EXPECT_EQ(k->variant_violation({{"n", 4160}}, k->variants[3]), "");
  EXPECT_EQ(k->variant_violation({{"n", 4160}}, k->variants[1]), "a row fits in the variant's registers");
  EXPECT_EQ(k->describe_tuning(k->variants[1]), "T=float, TG=64");
}

}  // namespace accept_test
}  // namespace mtlgen::spec::testing
