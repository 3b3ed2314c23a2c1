// Properties of the harness backend that snapshots alone would not state: every kernel gets its
// programs (a family its bench program), one reference call per type choice, its test cases (each with its seed), variants and
// tolerances as plain C++, and the generated
// CMakeLists.txt builds every kernel the way DESIGN says.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "emit_objc/objc_emitter.h"
#include "golden.h"

namespace mtlgen::testing {
namespace harness_emitter_test {  // named: unity builds (tests/CMakeLists.txt)

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

std::vector<ir::Kernel> kernels() { return load({"specs", "tests/emit_objc/in"}); }

TEST(HarnessEmitter, WritesBothProgramsPerKernelAndTheBuild) {
  auto ks = kernels();
  const auto files = run_emitter("harness", ks).files();
  for (const auto& k : ks) {
    EXPECT_EQ(files.count(k.name + "/" + k.name + "_test_data.h"), 1u) << k.name;  // families too
    if (k.is_family()) {  // a bench program timing its token and each dispatch; its kernels' tunings
      const std::string& main = files.at(fmt::format("{0}/bench_{0}.mm", k.name));
      EXPECT_NE(main.find("mtlgen::harness::family_bench_main(family, argc, argv, MTLGEN_DEFAULT_METALLIB)"),
                std::string::npos);
      EXPECT_EQ(files.count(k.name + "/" + k.name + "_harness.h"), 1u);
      EXPECT_EQ(files.count(k.name + "/autotune_" + k.name + ".mm"), 0u);
      continue;
    }
    for (const char* program : {"bench", "autotune"}) {
      const std::string& main = files.at(fmt::format("{0}/{1}_{0}.mm", k.name, program));
      EXPECT_NE(main.find(fmt::format("mtlgen::harness::{}_main(kernel, argc, argv, MTLGEN_DEFAULT_METALLIB)", program)),
                std::string::npos);
    }
    EXPECT_EQ(files.count(k.name + "/" + k.name + "_harness.h"), 1u);
  }
  for (const char* library : {"CMakeLists.txt", "support/mtlgen_harness.h", "support/mtlgen_harness.mm"}) {
    EXPECT_EQ(files.count(library), 1u) << library;
  }
}

TEST(HarnessEmitter, CallsTheReferenceOncePerTypeChoice) {
  for (const auto& k : kernels()) {
    if (k.is_family()) continue;
    const std::string harness = run_emitter("harness", {k}).files().at(k.name + "/" + k.name + "_harness.h");
    std::set<std::map<std::string, ir::ScalarType>> choices;
    for (const auto& v : k.variants) choices.insert(v.types);
    EXPECT_EQ(count(harness, fmt::format("mtlgen::kernels::{}::reference", k.name)), choices.size()) << k.name;
  }
}

// The test data every kernel and family carries as plain C++: each case once, with its own seed
// (the plan's when it has none), every tolerance, and every compiled variant.
TEST(HarnessEmitter, TestDataGivesEveryCaseWithItsOwnSeed) {
  for (const auto& k : kernels()) {
    const std::string data = run_emitter("harness", {k}).files().at(k.name + "/" + k.name + "_test_data.h");
    for (const auto& c : k.tests.cases) {
      EXPECT_EQ(count(data, fmt::format("all.push_back({{\"{}\", {}, {{", c.name, c.seed.value_or(k.tests.seed))), 1u)
          << k.name << " " << c.name;
    }
    EXPECT_EQ(count(data, "case mtlgen::DType::"), k.tests.tolerances.size()) << k.name;
    EXPECT_EQ(count(data, "all.emplace_back(types, tuning);"), k.variants.size()) << k.name;
    EXPECT_EQ(data.find("#import"), std::string::npos) << "plain C++: " << k.name;
  }
}

// Every tolerance travels as all five td::Tolerance members (the Mac programs judge gradients by
// peak_rel as verify does; -Wmissing-field-initializers wants all five), peak_rel only where set.
TEST(HarnessEmitter, TestDataCarriesPeakRelWhereTheSpecSetsIt) {
  size_t with_peak = 0;
  for (const auto& k : kernels()) {
    const std::string data = run_emitter("harness", {k}).files().at(k.name + "/" + k.name + "_test_data.h");
    size_t expected = 0;
    for (const auto& [type, t] : k.tests.tolerances) expected += t.peak_rel.has_value();
    for (const auto& [output, t] : k.tests.output_tolerances) expected += t.peak_rel.has_value();
    size_t set = 0;
    const size_t begin = data.find("inline td::Tolerance tolerance(");
    ASSERT_NE(begin, std::string::npos) << k.name;
    const std::string body = data.substr(begin, data.find("default:", begin) - begin);
    for (size_t at = body.find("return {"); at != std::string::npos; at = body.find("return {", at + 1)) {
      const std::string init = body.substr(at, body.find('}', at) - at);
      EXPECT_EQ(std::count(init.begin(), init.end(), ','), 4) << k.name << ": " << init;
      set += init.rfind(", std::nullopt") != init.size() - std::string(", std::nullopt").size();
    }
    EXPECT_EQ(set, expected) << k.name;
    with_peak += expected;
  }
  EXPECT_GT(with_peak, 0u) << "no shipped spec uses peak_rel: this test checks nothing";
}

TEST(HarnessEmitter, BuildsEachKernelWithItsMslVersionAndSafeMath) {
  auto ks = kernels();
  const std::string cmake = run_emitter("harness", ks).files().at("CMakeLists.txt");
  EXPECT_EQ(cmake.rfind("# CMakeLists.txt: generated by mtlgen", 0), 0u) << "CMake comments start with #";
  EXPECT_NE(cmake.find("-fno-fast-math"), std::string::npos);
  EXPECT_NE(cmake.find("xcrun -sdk macosx metallib"), std::string::npos);
  for (const auto& k : ks) {
    // A family has no .metal of its own; its glue and reference build with the kernels'.
    EXPECT_EQ(count(cmake, fmt::format("mtlgen_air({} {})", k.name, k.msl_version)), k.is_family() ? 0u : 1u) << k.name;
    EXPECT_EQ(count(cmake, fmt::format("{}/{}.mm", k.name, emit::objc_class_name(k))), 1u) << k.name;
    EXPECT_EQ(count(cmake, fmt::format("{0}/{0}_reference.cpp", k.name)), 1u) << k.name;
  }
}

}  // namespace harness_emitter_test
}  // namespace mtlgen::testing
