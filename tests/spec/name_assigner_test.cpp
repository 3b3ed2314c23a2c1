// The name assigner (spec/name_assigner.h): how spec names become Objective-C, C++ and file
// names, that distinct specs never share a derived name, and the checks across a library.
#include <set>

#include "spec/name_assigner.h"
#include "spec/names.h"
#include "spec_test_util.h"

namespace mtlgen::spec::testing {
namespace {

// kMinimalSpec with the kernel named `name` and the buffer `x` named `buffer`.
std::string spec_named(const std::string& name, const std::string& buffer = "x") {
  std::string text = kMinimalSpec;
  text.replace(text.find("name: scale"), 11, "name: " + name);
  text.replace(text.find("  x: {"), 3, "  " + buffer);
  text.replace(text.find("x[gid]"), 1, buffer);
  text.replace(text.find("x[i]"), 1, buffer);
  return text;
}

// A spec with the buffers `names` (read) and `y` (write).
std::string spec_with_buffers(const std::vector<std::string>& names) {
  std::string text = kMinimalSpec;
  std::string lines;
  for (const auto& n : names) lines += "  " + n + ": {type: float, shape: [n], access: read}\n";
  text.replace(text.find("  x: {"), text.find("  y: {") - text.find("  x: {"), lines);
  text.replace(text.find("x[gid] * 2.0f"), 13, "2.0f");
  text.replace(text.find("x[i] * 2.0f"), 11, "2.0f");
  return text;
}

bool has_error_containing(const support::Diagnostics& diags, const std::string& text) {
  for (const auto& d : diags.all()) {
    if (d.message.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(Camel, WordsAtUnderscoresDigitsKeptApart) {
  EXPECT_EQ(upper_camel("rms_norm"), "RmsNorm");
  EXPECT_EQ(lower_camel("rms_norm"), "rmsNorm");
  EXPECT_EQ(upper_camel("q8_0"), "Q8_0");
  EXPECT_EQ(upper_camel("q8_0_matvec"), "Q8_0Matvec");
  EXPECT_EQ(lower_camel("q8_0_matvec"), "q8_0Matvec");
  EXPECT_EQ(upper_camel("conv_2d"), "Conv2d");
  EXPECT_EQ(upper_camel("q80"), "Q80");
  EXPECT_EQ(lower_camel("X"), "x");
}

TEST(Camel, LeadingAndTrailingUnderscoresStay) {
  EXPECT_EQ(lower_camel("error_"), "error_");
  EXPECT_EQ(upper_camel("norm_"), "Norm_");
  EXPECT_EQ(lower_camel("_x"), "_x");
  EXPECT_EQ(upper_camel("_x"), "_X");
  EXPECT_EQ(upper_camel("a__b"), "A__B");  // total, though C++ reserves such names
}

TEST(Camel, DistinctOnNamesThatUsedToMeet) {
  const std::vector<std::string> names = {"q8_0", "q80", "a_b", "ab", "x_", "x", "_x", "rms_norm", "rms__norm",
                                          "error", "error_", "conv_2d", "conv2_d"};
  std::set<std::string> upper, lower;
  for (const auto& n : names) {
    EXPECT_TRUE(upper.insert(upper_camel(n)).second) << n << " -> " << upper_camel(n);
    EXPECT_TRUE(lower.insert(lower_camel(n)).second) << n << " -> " << lower_camel(n);
  }
}

TEST(KernelNames, EveryDerivedNameFromTheKernelName) {
  auto r = load_text(spec_named("q8_0_matvec"));
  ASSERT_TRUE(r.kernel) << r.diags.format_all();
  const ir::KernelNames& n = r.kernel->names;
  EXPECT_EQ(n.objc_class, "MTGQ8_0Matvec");
  EXPECT_EQ(n.property, "q8_0Matvec");
  EXPECT_EQ(n.facade_class, "Q8_0MatvecKernel");
  EXPECT_EQ(n.cpp_namespace, "mtlgen::kernels::q8_0_matvec");
  EXPECT_EQ(n.path(n.objc_header), "q8_0_matvec/MTGQ8_0Matvec.h");
  EXPECT_EQ(n.path(n.metal), "q8_0_matvec/q8_0_matvec.metal");
  EXPECT_EQ(n.bench_source, "bench_q8_0_matvec.mm");
  std::vector<std::string> files = n.files();
  EXPECT_EQ(std::set<std::string>(files.begin(), files.end()).size(), files.size());
}

TEST(KernelNames, ArcMethodFamilyPropertiesGetASuffix) {
  auto r = load_text(spec_named("copy_rows"));
  ASSERT_TRUE(r.kernel) << r.diags.format_all();
  EXPECT_EQ(r.kernel->names.property, "copyRowsKernel");
  EXPECT_EQ(r.kernel->names.objc_class, "MTGCopyRows");
  auto plain = load_text(spec_named("copyright"));  // `copy` then a lower-case letter: no family
  ASSERT_TRUE(plain.kernel) << plain.diags.format_all();
  EXPECT_EQ(plain.kernel->names.property, "copyright");
}

TEST(BufferNames, ErrorWithUnderscoreKeepsItApartFromTheErrorParameter) {
  auto r = load_text(spec_named("scale", "error_"));
  ASSERT_TRUE(r.kernel) << r.diags.format_all();
  EXPECT_EQ(r.kernel->names.buffers[0].label, "error_");
  EXPECT_EQ(r.kernel->names.buffers[0].offset, "error_Offset");
  EXPECT_EQ(r.kernel->names.buffers[0].camel, "Error_");
}

TEST(BufferNames, LabelsOffsetsAndCamelPerBuffer) {
  auto r = load_text(spec_with_buffers({"a_b", "ab", "x_in"}));
  ASSERT_TRUE(r.kernel) << r.diags.format_all();
  const auto& b = r.kernel->names.buffers;
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[0].label, "aB");
  EXPECT_EQ(b[1].label, "ab");
  EXPECT_EQ(b[2].offset, "xInOffset");
  EXPECT_EQ(b[2].camel, "XIn");
}

TEST(BufferNames, CollisionsAreReportedAtTheLaterBuffer) {
  auto offset = load_text(spec_with_buffers({"x", "x_offset"}));
  EXPECT_FALSE(offset.kernel);
  EXPECT_TRUE(has_error_containing(offset.diags, "`xOffset`, which is already the byte offset of buffer `x`"))
      << offset.diags.format_all();
  auto camel = load_text(spec_with_buffers({"a_b", "aB"}));
  EXPECT_FALSE(camel.kernel);
  EXPECT_TRUE(has_error_containing(camel.diags, "already the parameter of buffer `a_b`")) << camel.diags.format_all();
}

TEST(ReservedNames, EachTargetsList) {
  EXPECT_STREQ(reserved_by("float4"), "MSL");
  EXPECT_STREQ(reserved_by("packed_half3"), "MSL");
  EXPECT_STREQ(reserved_by("float3x4"), "MSL");
  EXPECT_EQ(reserved_by("float5"), nullptr);
  EXPECT_NE(reserved_in_kernel("tanh"), nullptr);
  EXPECT_NE(reserved_in_kernel("simd_prefix_exclusive_sum"), nullptr);
  EXPECT_NE(reserved_in_kernel("atomic_fetch_add_explicit"), nullptr);
  EXPECT_EQ(reserved_in_kernel("rows"), nullptr);
  EXPECT_NE(reserved_by("rms__norm"), nullptr);
  EXPECT_NE(reserved_by("_Rows"), nullptr);
  EXPECT_EQ(reserved_by("_rows"), nullptr);
  EXPECT_NE(reserved_by("check_dims"), nullptr);
  EXPECT_NE(reserved_in_glue("variantIndex"), nullptr);
  EXPECT_NE(reserved_in_glue("_device"), nullptr);
  EXPECT_NE(reserved_in_glue("for"), nullptr);
  EXPECT_EQ(reserved_in_glue("xOffset"), nullptr);
}

TEST(ReservedNames, DimNamedLikeAnMslFunctionIsRejectedAtItsLine) {
  std::string text = kMinimalSpec;
  text.replace(text.find("  n: {min: 1}"), 3, "  floor");
  auto r = load_text(text);
  EXPECT_FALSE(r.kernel);
  ASSERT_TRUE(has_error_containing(r.diags, "`floor` is reserved by MSL")) << r.diags.format_all();
}

// ---- across a library ----

struct Library {
  TempDir dir;
  support::Diagnostics diags;
  std::vector<ir::Kernel> kernels;

  void add(const std::string& file, const std::string& text) {
    auto k = load_spec(dir.write(file, text).string(), file, diags);
    ASSERT_TRUE(k) << diags.format_all();
    kernels.push_back(*k);
  }
  std::string check() {
    check_library_names(kernels, diags);
    return diags.format_all();
  }
};

TEST(LibraryNames, DistinctKernelsPass) {
  Library lib;
  lib.add("a.yaml", spec_named("rms_norm"));
  lib.add("b.yaml", spec_named("q8_0_matvec"));
  lib.add("c.yaml", spec_named("q80_matvec"));
  EXPECT_EQ(lib.check(), "");
}

TEST(LibraryNames, TwoKernelsOneClassAcrossSpecs) {
  Library lib;
  lib.add("a.yaml", spec_named("rms_norm"));
  lib.add("b.yaml", spec_named("rmsNorm"));
  const std::string report = lib.check();
  EXPECT_NE(report.find("b.yaml:1:7: error: kernel `rmsNorm` gives the Objective-C name `MTGRmsNorm`, already given by "
                        "kernel `rms_norm` (a.yaml:1)"),
            std::string::npos)
      << report;
  EXPECT_EQ(lib.diags.error_count(), 1u) << report;  // one report per pair, not one per typedef
}

TEST(LibraryNames, DirectoriesThatDifferOnlyInCase) {
  Library lib;
  lib.add("a.yaml", spec_named("rms"));
  lib.add("b.yaml", spec_named("Rms"));
  EXPECT_NE(lib.check().find("output directory"), std::string::npos);
}

TEST(LibraryNames, AClassAndAnotherKernelsTypedef) {
  Library lib;
  lib.add("a.yaml", spec_named("rms"));
  lib.add("b.yaml", spec_named("rms_dims"));
  EXPECT_NE(lib.check().find("`MTGRmsDims`, already given by kernel `rms`"), std::string::npos);
}

TEST(LibraryNames, EntryPointsShareOneMetallib) {
  Library lib;
  std::string typed = spec_named("rms");
  typed.replace(typed.find("dims:"), 5, "types:\n  T: [float]\ndims:");
  lib.add("a.yaml", typed);
  lib.add("b.yaml", spec_named("rms_f32"));
  EXPECT_NE(lib.check().find("metallib entry point `rms_f32_tg32`"), std::string::npos) << lib.diags.format_all();
}

TEST(LibraryNames, RuntimeNamesAndTheSupportDirectory) {
  Library lib;
  lib.add("a.yaml", spec_named("kernel_library"));
  lib.add("b.yaml", spec_named("support"));
  const std::string report = lib.check();
  EXPECT_NE(report.find("`MTGKernelLibrary`, which the Objective-C runtime declares"), std::string::npos) << report;
  EXPECT_NE(report.find("kernel `support` would write its files into `support`"), std::string::npos) << report;
}

}  // namespace
}  // namespace mtlgen::spec::testing
