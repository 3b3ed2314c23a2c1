// verify dispatches what the generated host description (<kernel>_types.h, the code the glue runs
// on the Mac) computes: the module exposes it (mtlsim_host_dispatch), describe_host_dispatch reads
// it and names every place it disagrees with the spec.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "spec/library.h"
#include "verify/dispatch_setup.h"
#include "verify/sim_module.h"

namespace mtlgen::verify {
namespace {

namespace fs = std::filesystem;

ir::Kernel load_one(const std::string& path, const std::string& name) {
  support::Diagnostics diags;
  for (auto& k : spec::load_library({path}, diags)) {
    if (k.name == name) return k;
  }
  ADD_FAILURE() << diags.format_all();
  return {};
}

ModuleOptions cached() {
  ModuleOptions o;
  o.cache_dir = MTLGEN_TEST_CACHE_DIR;
  return o;
}

const ir::Variant& variant_named(const ir::Kernel& k, const std::string& entry_point) {
  for (const auto& v : k.variants) {
    if (v.entry_point == entry_point) return v;
  }
  throw std::logic_error("no variant " + entry_point);
}

ScalarValue defaults(const ir::Kernel& k) {
  return [&k](const std::string& name) {
    for (const auto& s : k.scalars) {
      if (s.name == name) return s.default_value;
    }
    return 0.0;
  };
}

TEST(HostDispatch, IsWhatTheGeneratedTypesHeaderComputes) {
  ir::Kernel k = load_one("specs/rms_norm.yaml", "rms_norm");
  SimModule module(k, cached());
  LoadedModule loaded(module.path());
  const ir::Variant& v = variant_named(k, "rms_norm_f16_tg256");
  mtlsim::HostDispatch host;
  std::string problem = describe_host_dispatch(loaded, k, v, {{"rows", 3}, {"n", 1000}}, defaults(k), host);
  EXPECT_EQ(problem, "");
  EXPECT_EQ(host.threadgroups[0], 3u);  // one threadgroup per row
  EXPECT_EQ(host.threads_per_threadgroup[0], 256u);
  EXPECT_STREQ(host.entry_point, "rms_norm_f16_tg256");
  ASSERT_EQ(host.buffers, 3);
  EXPECT_EQ(host.buffer_elements[0], 3000);  // x
  // Params {rows, n, eps} as make_params builds it, byte for byte.
  ASSERT_EQ(host.params_size, 12u);
  uint32_t rows = 0, n = 0;
  float eps = 0;
  std::memcpy(&rows, host.params, 4);
  std::memcpy(&n, host.params + 4, 4);
  std::memcpy(&eps, host.params + 8, 4);
  EXPECT_EQ(rows, 3u);
  EXPECT_EQ(n, 1000u);
  EXPECT_FLOAT_EQ(eps, 1e-6f);
}

TEST(HostDispatch, ReportsDimsItsCheckDimsRefuses) {
  ir::Kernel k = load_one("specs/rms_norm.yaml", "rms_norm");
  SimModule module(k, cached());
  LoadedModule loaded(module.path());
  mtlsim::HostDispatch host;
  std::string problem = describe_host_dispatch(loaded, k, k.variants.front(), {{"rows", 1}, {"n", 2000000}}, defaults(k), host);
  EXPECT_NE(problem.find("check_dims in rms_norm_types.h refuses"), std::string::npos) << problem;
  EXPECT_NE(problem.find("n must be at most 1048576"), std::string::npos) << problem;
}

// A module whose host description computes another grid, size, memory length and entry point
// than the spec: every difference is named, as a glue bug would be.
TEST(HostDispatch, NamesEveryDisagreementWithTheSpec) {
  ir::Kernel k = load_one("specs/rms_norm.yaml", "rms_norm");
  fs::path dir = fs::path(MTLGEN_TEST_CACHE_DIR) / "host_dispatch_test";
  fs::create_directories(dir);
  std::ofstream(dir / "wrong.cpp") << R"(#include <cstring>
#include <mtlsim/host_dispatch.h>
extern "C" int mtlsim_host_dispatch(int, const uint64_t* dims, const double*, mtlsim::HostDispatch* out) {
  out->threadgroups[0] = dims[0] + 1;
  out->threads_per_threadgroup[0] = 64;
  out->threadgroup_arrays = 1;
  out->threadgroup_memory_bytes[0] = 4;
  out->buffers = 3;
  out->buffer_elements[0] = 5;
  std::strcpy(out->entry_point, "rms_norm_f32_tg32");
  return 0;
})";
  std::string command = "g++ -std=c++20 -shared -fPIC -I " + std::string(MTLGEN_SHIM_DIR) + " " + (dir / "wrong.cpp").string() +
                        " -o " + (dir / "wrong.so").string();
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  LoadedModule loaded(dir / "wrong.so");
  const ir::Variant& v = variant_named(k, "rms_norm_f32_tg512");
  mtlsim::HostDispatch host;
  std::string problem = describe_host_dispatch(loaded, k, v, {{"rows", 2}, {"n", 8}}, defaults(k), host);
  for (const char* part : {"the glue's dispatch code in rms_norm_types.h disagrees with the spec for rms_norm_f32_tg512",
                           "threadgroups() gives (3, 1, 1) where the spec's dispatch gives (2, 1, 1)",
                           "threads_per_threadgroup() gives (64, 1, 1) where the spec gives (512, 1, 1)",
                           "threadgroup_memory_bytes(0) (`partials`) gives 4 where the spec gives 64",
                           "entry_point() gives `rms_norm_f32_tg32` where the variant is `rms_norm_f32_tg512`",
                           "x_elements() gives 5 where the spec's shape gives 16"}) {
    EXPECT_NE(problem.find(part), std::string::npos) << part << "\nin: " << problem;
  }
}

}  // namespace
}  // namespace mtlgen::verify
