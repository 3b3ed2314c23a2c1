// Real MLX and ggml kernel files (../shared/corpus, third-party, read in place) against the shim's
// standard-library surface: the MSL front end's clang parse of each may still fail for reasons of
// its own (address-space overloads, conformance), but no diagnostic may come from the shim or
// name a piece of Apple's library the shim lacks.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <regex>
#include <string>

#include "msl/msl_unit.h"
#include "support/diagnostics.h"

namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = fs::path(MTLGEN_SOURCE_DIR) / ".." / "shared" / "corpus";

// Diagnostics that mean a gap in the shim rather than in the front end or the file.
bool is_shim_gap(const mtlgen::support::Diagnostic& d) {
  static const std::regex gap(
      "'metal_[a-z_]+' file not found|mtlgen-embedded/shim|unknown type name '(METAL_FUNC|[a-z]+[0-9]x[0-9]|"
      "simdgroup_[a-z0-9_]+)'|no member named '[A-Za-z_0-9]+' in namespace 'metal'|use of undeclared identifier "
      "'(__metal_[a-z_0-9]+|_disjunction|_conjunction|M[A-Z_]+|HALF_[A-Z_]+)'");
  return d.severity == mtlgen::support::Severity::error && std::regex_search(d.message + " " + d.hint, gap);
}

std::string shim_gaps(const fs::path& file, const std::vector<fs::path>& includes) {
  mtlgen::support::Diagnostics diags;
  mtlgen::msl::ParseOptions o;
  o.file = file;
  o.include_dirs = includes;
  o.conformance = false;  // conformance findings are the front end's
  o.require_entry_point = false;
  mtlgen::msl::parse(o, diags);
  std::string out;
  for (const auto& d : diags.all())
    if (is_shim_gap(d)) out += diags.format(d) + "\n";
  return out;
}

class CorpusSurface : public ::testing::TestWithParam<const char*> {};

TEST_P(CorpusSurface, NoDiagnosticComesFromTheShimLibrary) {
  if (!fs::exists(kCorpus)) GTEST_SKIP() << "no corpus at " << kCorpus.string();
  const fs::path file = kCorpus / GetParam();
  EXPECT_EQ(shim_gaps(file, {kCorpus / "mlx", kCorpus / "ggml"}), "");
}

// One file per area of the library: norms and simd reductions, bfloat math, simdgroup matrices
// (steel gemm/attention, conv's operator*), quantized matvec with quad functions, ggml's matrices
// and simdgroup_half8x8. The _nax files need MSL 4 tensors, which the shim does not have.
INSTANTIATE_TEST_SUITE_P(Files, CorpusSurface,
                         ::testing::Values("mlx/mlx/backend/metal/kernels/rms_norm.metal",
                                           "mlx/mlx/backend/metal/kernels/unary.metal",
                                           "mlx/mlx/backend/metal/kernels/conv.metal",
                                           "mlx/mlx/backend/metal/kernels/scaled_dot_product_attention.metal",
                                           "mlx/mlx/backend/metal/kernels/quantized.metal",
                                           "mlx/mlx/backend/metal/kernels/random.metal",
                                           "ggml/ggml-metal.metal"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string stem = fs::path(info.param).stem().string();
                           for (char& c : stem) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return stem;
                         });

}  // namespace
