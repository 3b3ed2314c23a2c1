// What the emitters leave out of their files: `[[maybe_unused]]` on parameters that are used, and
// mtlgen's own markers in the MSL, whose spec lines are computed beside it instead.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "cli/driver.h"
#include "emit_common/cpp_text.h"
#include "emit_msl/msl_emitter.h"
#include "emit_reference/reference_emitter.h"
#include "support/output_set.h"

using namespace mtlgen;

namespace {

TEST(MaybeUnused, KeptOnlyOnParametersTheBodyDoesNotUse) {
  EXPECT_EQ(emit::drop_needless_maybe_unused(
                "int f([[maybe_unused]] const Dims& dims, [[maybe_unused]] const Tuning& tuning = {}) {\n"
                "  return dims.n;\n}\n"),
            "int f(const Dims& dims, [[maybe_unused]] const Tuning& tuning = {}) {\n  return dims.n;\n}\n");
}

TEST(MaybeUnused, MembersStringsAndCommentsOfTheSameNameAreNoUse) {
  const std::string cpp =
      "int g([[maybe_unused]] int n, [[maybe_unused]] int m) {\n"
      "  // n is not read here\n"
      "  return params.n + strlen(\"m\") + other->m;\n}\n";
  EXPECT_EQ(emit::drop_needless_maybe_unused(cpp), cpp);
}

TEST(MaybeUnused, DeclarationsAndVariablesAreLeftAlone) {
  const std::string cpp =
      "void h([[maybe_unused]] int a);\n"
      "void k() {\n  [[maybe_unused]] const int b = 1;\n  use(b);\n}\n";
  EXPECT_EQ(emit::drop_needless_maybe_unused(cpp), cpp);
}

class EmittedMsl : public ::testing::Test {
 protected:
  void SetUp() override {
    support::Diagnostics diags;
    kernels_ = driver::load_library({"specs/rms_norm.yaml", "tests/emit/in/preludes.yaml"}, diags);
    ASSERT_FALSE(diags.has_errors()) << diags.format_all();
  }
  std::vector<ir::Kernel> kernels_;
};

std::string line_at(const std::string& text, int line) {
  std::istringstream in(text);
  std::string l;
  for (int i = 0; i < line; ++i) std::getline(in, l);
  return l;
}

TEST_F(EmittedMsl, CarriesNoToolMarkers) {
  for (const auto& k : kernels_) {
    const std::string msl = emit::msl_source(k);
    for (const char* marker : {"// body: ", "// prelude: ", "// metal_prelude: ", "mtlgen helper", "\x01"}) {
      EXPECT_EQ(msl.find(marker), std::string::npos) << k.name << ": " << marker;
    }
  }
}

// Each spec block's lines map back to the spec, from where the emitter wrote it.
TEST_F(EmittedMsl, BlocksMapBackToTheirSpecLines) {
  int mapped = 0;
  for (const auto& k : kernels_) {
    const std::string msl = emit::msl_source(k);
    for (const auto& b : emit::msl_blocks(k)) {
      if (b.block->text.empty()) continue;
      ASSERT_GT(b.first_line, 0) << k.name << " " << b.what;
      const std::string first = b.block->text.substr(0, b.block->text.find('\n'));
      EXPECT_EQ(line_at(msl, b.first_line), std::string(b.indent, ' ') + first) << k.name << " " << b.what;
      auto at = emit::spec_location(msl, {b}, b.first_line);
      ASSERT_TRUE(at.has_value()) << k.name << " " << b.what;
      EXPECT_EQ(at->line, b.block->loc.line);
      EXPECT_FALSE(emit::spec_location(msl, {b}, b.first_line - 1).has_value());
      ++mapped;
    }
  }
  EXPECT_GE(mapped, 3) << "the specs no longer have a body and both preludes";
}

// The reference's blocks, its included file among them, map back from the lines after their
// markers: the included file's to its own lines, the others to the spec's.
TEST_F(EmittedMsl, ReferenceBlocksMapBackToTheirLines) {
  int included = 0;
  for (const auto& k : kernels_) {
    support::OutputSet out;
    emit::emit_reference(k, out);
    const std::string cpp = out.files().at(k.name + "/" + k.name + "_reference.cpp");
    for (const auto& b : emit::reference_blocks(k)) {
      if (b.block->text.empty()) continue;
      const int first = emit::marker_line(cpp, b.marker) + 1;
      ASSERT_GT(first, 1) << k.name << " " << b.what;
      const std::string line = b.block->text.substr(0, b.block->text.find('\n'));
      const bool hoisted = line.rfind("#include", 0) == 0;  // moved to the top, its line left empty
      EXPECT_EQ(line_at(cpp, first), hoisted ? "" : std::string(b.indent, ' ') + line) << k.name << " " << b.what;
      auto at = emit::spec_location(cpp, {b}, first + 1);
      ASSERT_TRUE(at.has_value()) << k.name << " " << b.what;
      EXPECT_EQ(at->file, b.block->loc.file);
      EXPECT_EQ(at->line, b.block->loc.line + 1);
      if (b.block == &k.reference_include.code) {
        EXPECT_EQ(at->file, "tests/emit/in/preludes_reference.inc");
        ++included;
      }
    }
  }
  EXPECT_EQ(included, 1) << "preludes.yaml no longer includes a file";
}

}  // namespace
