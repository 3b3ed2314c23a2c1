// The CUDA flavour of MSL (msl::Unit::cuda_source) and the CUDA launchers (emit_cuda), pinned by
// snapshots in tests/cuda/golden/<name>/: run with MTLGEN_UPDATE_GOLDEN=1 to rewrite them. These
// run without nvcc; what nvcc and the GPU make of the text is checked on a GPU machine (docs/gpu.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cuda/cuda_emitter.h"
#include "msl/msl_unit.h"
#include "spec/library.h"

namespace mtlgen {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool updating() {
  const char* u = std::getenv("MTLGEN_UPDATE_GOLDEN");
  return u && std::string(u) == "1";
}

void expect_snapshot(const std::string& name, const std::string& file, const std::string& text) {
  fs::path golden = fs::path(MTLGEN_CUDA_TEST_DIR) / "golden" / name / file;
  if (updating()) {
    fs::create_directories(golden.parent_path());
    std::ofstream(golden, std::ios::binary) << text;
    return;
  }
  ASSERT_TRUE(fs::exists(golden)) << "no snapshot " << golden << "; run with MTLGEN_UPDATE_GOLDEN=1";
  EXPECT_EQ(text, read(golden)) << "the CUDA text of " << name << " changed: compare with " << golden;
}

size_t lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

msl::Unit parse_file(const fs::path& file) {
  support::Diagnostics diags;
  msl::ParseOptions o;
  o.file = file;
  o.conformance = false;
  msl::Unit unit = msl::parse(o, diags);
  EXPECT_FALSE(diags.has_errors()) << diags.format_all();
  return unit;
}

// Banners name the spec relative to the working directory: load from the source root, as `mtlgen` runs.
ir::Kernel load_spec(const std::string& name, const fs::path& dir = "specs") {
  support::Diagnostics diags;
  fs::current_path(MTLGEN_SOURCE_DIR);
  auto kernels = spec::load_library({dir / (name + ".yaml")}, diags);
  EXPECT_FALSE(diags.has_errors()) << diags.format_all();
  for (auto& k : kernels)
    if (k.name == name) return std::move(k);
  ADD_FAILURE() << "no kernel " << name;
  return {};
}

TEST(CudaRewrite, HandWrittenFile) {
  msl::Unit unit = parse_file(fs::path(MTLGEN_CUDA_TEST_DIR) / "in" / "hand_written.metal");
  std::string cuda = unit.cuda_source();
  EXPECT_EQ(lines(cuda), lines(unit.text())) << "every line keeps its number (sanitizer reports name them)";
  expect_snapshot("hand_written", "hand_written.metal", cuda);
}

// What each rewrite does, on the hand-written file: one behaviour per expectation.
TEST(CudaRewrite, WhatChanges) {
  std::string cuda = parse_file(fs::path(MTLGEN_CUDA_TEST_DIR) / "in" / "hand_written.metal").cuda_source();
  EXPECT_NE(cuda.find("__device__ bool has_bias    "), std::string::npos) << "a function constant is a __device__ variable";
  EXPECT_NE(cuda.find("__shared__ float partial[kSimd];"), std::string::npos) << "a body threadgroup variable is __shared__";
  EXPECT_NE(cuda.find("__device__ inline float load4(       const T* x, uint i)"), std::string::npos);
  EXPECT_NE(cuda.find("__device__ float scaled(float v) const"), std::string::npos) << "methods are __device__ too";
  EXPECT_NE(cuda.find("mtl_float4 v = mtl_float4("), std::string::npos) << "vector names are the shim's";
  EXPECT_EQ(cuda.find("[["), std::string::npos) << "no attribute is left";
  EXPECT_EQ(cuda.find("template [["), std::string::npos);
  EXPECT_EQ(cuda.find("device const"), std::string::npos) << "no address space is left";
  EXPECT_EQ(cuda.find("host_name"), std::string::npos) << "explicit instantiations are gone";
  EXPECT_NE(cuda.find("#define instantiate(name, T) \\\n    "), std::string::npos) << "macro continuations stay";
  EXPECT_NE(cuda.find("  __device__          void scaled_sum("), std::string::npos) << "`kernel` gives way to __device__";
  EXPECT_NE(cuda.find("v * mtlcu::half_literal(0.5) + mtlcu::half_literal(1);"), std::string::npos)
      << "half literals (0.5h, 1H) are the shim's constexpr half_literal";
}

TEST(CudaRewrite, GgmlStyleFile) {
  msl::Unit unit = parse_file(fs::path(MTLGEN_SOURCE_DIR) / "tests" / "msl" / "in" / "ggml_style.metal");
  std::string cuda = unit.cuda_source();
  EXPECT_EQ(lines(cuda), lines(unit.text()));
  expect_snapshot("ggml_style", "ggml_style.metal", cuda);
}

// Shipped kernels: the CUDA flavour of the emitted MSL and the launchers from the binding table.
class ShippedKernel : public ::testing::TestWithParam<std::string> {};

TEST_P(ShippedKernel, Snapshot) {
  ir::Kernel k = load_spec(GetParam());
  support::OutputSet out;
  emit::emit_cuda(k, out);
  for (const std::string& file : {k.name + ".metal", std::string("launcher.cu"), std::string("host.cpp"),
                                  std::string("modules.cu")}) {
    auto it = out.files().find(emit::cuda_dir(k) + file);
    ASSERT_NE(it, out.files().end()) << file;
    expect_snapshot(k.name, file, it->second);
  }
}

INSTANTIATE_TEST_SUITE_P(CudaRewrite, ShippedKernel, ::testing::Values("argmax", "rms_norm", "matvec", "rope", "affine_matvec"));

// The threadgroup arrays a spec body declares are __shared__, one per block, as the simulator's are
// one per threadgroup; [[threads_per_simdgroup]] is the shim's 32.
TEST(CudaRewrite, SpecBodyThreadgroupArraysAreShared) {
  ir::Kernel k = load_spec("tile_transpose_sums", "tests/verify/body_threadgroup");
  support::OutputSet out;
  emit::emit_cuda(k, out);
  auto metal = out.files().find(emit::cuda_dir(k) + k.name + ".metal");
  ASSERT_NE(metal, out.files().end());
  EXPECT_NE(metal->second.find("__shared__ float tile[TG_Y][TG_X + 1];"), std::string::npos) << metal->second;
  EXPECT_NE(metal->second.find("__shared__ float partials[TG_X * TG_Y / SIMD_SIZE];"), std::string::npos);
}

TEST(CudaRewrite, SimdWidthBuiltin) {
  ir::Kernel k = load_spec("simd_width_sums", "tests/verify/builtins");
  support::OutputSet out;
  emit::emit_cuda(k, out);
  auto launcher = out.files().find(emit::cuda_launcher_path(k));
  ASSERT_NE(launcher, out.files().end());
  EXPECT_NE(launcher->second.find("mtlcu::as_builtin<uint>(mtlcu::threads_per_simdgroup())"), std::string::npos)
      << launcher->second;
}

// A family's program: each of its kernels with launchers and host description of its own, the
// kernels listed in Family::kernels order, the family's reference the one that judges.
TEST(CudaRewrite, FamilyProgram) {
  ir::Kernel k = load_spec("argmax_two_stage");
  support::OutputSet out;
  emit::emit_cuda(k, out);
  for (const auto& member : k.family->kernels) {
    for (const std::string& file : {member.name + ".metal", std::string("launcher.cu"), std::string("host.cpp")})
      EXPECT_TRUE(out.files().count(emit::cuda_dir(member) + file)) << member.name << "/" << file;
  }
  auto modules = out.files().find(emit::cuda_dir(k) + "modules.cu");
  ASSERT_NE(modules, out.files().end());
  expect_snapshot(k.name, "modules.cu", modules->second);
  auto units = emit::cuda_compile_units(k);
  EXPECT_NE(std::find(units.begin(), units.end(), "argmax_blocks/argmax_blocks_reference.cpp"), units.end());
  EXPECT_NE(std::find(units.begin(), units.end(), "cuda/argmax_merge/host.cpp"), units.end());
}

}  // namespace
}  // namespace mtlgen
