// The precompiled preludes simulator modules share (verify/module_prelude.h), and that real modules
// use them: the host side compiled once for every flavour of a kernel's module.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "spec/library.h"
#include "verify/module_prelude.h"
#include "verify/sim_module.h"

namespace mtlgen::verify {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("mtlgen-prelude-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// A compiler that only records its command lines and writes what -o names (or fails).
struct FakeCompiler {
  int status = 0;
  std::vector<std::vector<std::string>> calls;
  RunCompiler runner() {
    return [this](const std::vector<std::string>& argv, const fs::path&) {
      calls.push_back(argv);
      for (size_t i = 0; i + 1 < argv.size(); ++i) {
        if (argv[i] == "-o" && status == 0) std::ofstream(argv[i + 1]) << "pch";
      }
      return status;
    };
  }
};

bool has(const std::vector<std::string>& argv, const std::string& a, const std::string& b) {
  for (size_t i = 0; i + 1 < argv.size(); ++i) {
    if (argv[i] == a && argv[i + 1] == b) return true;
  }
  return false;
}

const std::vector<std::string> kUnit = {"g++", "-O2", "-include", "mtlsim/poison_hooks.h", "-I", "sim/k", "-DX=1"};

TEST(ModulePrelude, TheIncludesMoveIntoOnePrecompiledHeader) {
  const fs::path shim = fresh_dir("includes");
  FakeCompiler cc;
  const std::vector<std::string> unit = with_precompiled_prelude(kUnit, PreludeKind::kernel, shim, "g++ 12", cc.runner());
  ASSERT_EQ(cc.calls.size(), 1u);
  const std::vector<std::string>& pch = cc.calls[0];
  EXPECT_TRUE(has(pch, "-x", "c++-header"));
  EXPECT_TRUE(has(pch, "-I", shim.string())) << "the prelude resolves through the shared shim";
  EXPECT_FALSE(has(pch, "-I", "sim/k")) << "a kernel's own directory must not change the prelude";
  EXPECT_FALSE(has(pch, "-include", "mtlsim/poison_hooks.h"));
  ASSERT_GE(unit.size(), 2u);
  EXPECT_EQ(unit[unit.size() - 2], "-include");
  const fs::path header = unit.back();
  EXPECT_TRUE(fs::exists(header.string() + ".gch"));
  EXPECT_EQ(std::vector<std::string>(unit.begin(), unit.end() - 2),
            (std::vector<std::string>{"g++", "-O2", "-I", "sim/k", "-DX=1"}));
  const std::string text = read(header);
  EXPECT_LT(text.find("#include \"mtlsim/poison_hooks.h\""), text.find("#include <metal_stdlib>")) << text;
  fs::remove_all(shim);
}

TEST(ModulePrelude, TheSameFlagsShareOnePreludeAndOthersGetTheirOwn) {
  const fs::path shim = fresh_dir("share");
  FakeCompiler cc;
  const auto first = with_precompiled_prelude(kUnit, PreludeKind::kernel, shim, "g++ 12", cc.runner());
  std::vector<std::string> other_kernel = kUnit;
  other_kernel[5] = "sim/other";
  const auto second = with_precompiled_prelude(other_kernel, PreludeKind::kernel, shim, "g++ 12", cc.runner());
  EXPECT_EQ(cc.calls.size(), 1u) << "another kernel's unit with the same flags reuses the prelude";
  EXPECT_EQ(first.back(), second.back());
  std::vector<std::string> o1 = kUnit;
  o1[1] = "-O1";  // a .gch is only used by compiles with the flags it was built with
  EXPECT_NE(with_precompiled_prelude(o1, PreludeKind::kernel, shim, "g++ 12", cc.runner()).back(), first.back());
  EXPECT_NE(with_precompiled_prelude(kUnit, PreludeKind::host, shim, "g++ 12", cc.runner()).back(), first.back());
  EXPECT_NE(with_precompiled_prelude(kUnit, PreludeKind::kernel, shim, "g++ 13", cc.runner()).back(), first.back());
  EXPECT_EQ(cc.calls.size(), 4u);
  fs::remove_all(shim);
}

TEST(ModulePrelude, AFailedPrecompileLeavesTheHeaderToReadAndIsNotRetried) {
  const fs::path shim = fresh_dir("failed");
  FakeCompiler cc;
  cc.status = 1;
  const auto unit = with_precompiled_prelude(kUnit, PreludeKind::kernel, shim, "g++ 12", cc.runner());
  EXPECT_TRUE(fs::exists(unit.back()));
  EXPECT_FALSE(fs::exists(unit.back() + ".gch"));
  with_precompiled_prelude(kUnit, PreludeKind::kernel, shim, "g++ 12", cc.runner());
  EXPECT_EQ(cc.calls.size(), 1u);
  fs::remove_all(shim);
}

// A real module, plain and race-instrumented: both compiles took their prelude from a .gch g++
// accepted (-Winvalid-pch would say otherwise in compile.log), and the host side was compiled once.
TEST(ModulePrelude, ModulesUseTheirPreludesAndShareTheHostObject) {
  const fs::path cache = fresh_dir("modules");
  support::Diagnostics diags;
  std::vector<ir::Kernel> kernels = spec::load_library({"tests/verify/twins/missing_barrier.yaml"}, diags);
  ASSERT_EQ(kernels.size(), 1u) << diags.format_all();
  ModuleOptions o;
  o.cache_dir = cache;
  SimModule plain(kernels[0], o);
  o.race_instrumented = true;
  SimModule races(kernels[0], o);
  for (const SimModule* m : {&plain, &races}) {
    const std::string log = read(m->path().parent_path() / "compile.log");
    EXPECT_NE(log.find("/prelude.h -c"), std::string::npos) << log;
    EXPECT_EQ(log.find("Winvalid-pch]"), std::string::npos) << log;
  }
  size_t host_objects = 0;
  for (const auto& e : fs::directory_iterator(cache / "host")) host_objects += e.path().extension() == ".o";
  EXPECT_EQ(host_objects, 1u);
  fs::remove_all(cache);
}

}  // namespace
}  // namespace mtlgen::verify

namespace mtlgen::verify {
namespace {

// The spec's path and hash reach a module's sources only in comments: a copy of a spec elsewhere,
// or with another kernel of it changed, reuses the modules of the kernels it did not change.
TEST(ModuleKey, ACopyOfTheSpecElsewhereReusesTheModule) {
  const fs::path dir = fresh_dir("copy");
  fs::copy_file("tests/verify/twins/missing_barrier.yaml", dir / "missing_barrier.yaml");
  std::ofstream(dir / "missing_barrier.yaml", std::ios::app) << "# a comment changes the spec's hash\n";
  support::Diagnostics diags;
  std::vector<ir::Kernel> original = spec::load_library({"tests/verify/twins/missing_barrier.yaml"}, diags);
  std::vector<ir::Kernel> copy = spec::load_library({dir / "missing_barrier.yaml"}, diags);
  ASSERT_EQ(original.size(), 1u) << diags.format_all();
  ASSERT_EQ(copy.size(), 1u) << diags.format_all();
  ASSERT_NE(original[0].spec_hash, copy[0].spec_hash);
  ModuleOptions o;
  o.cache_dir = dir / "cache";
  SimModule first(original[0], o);
  SimModule second(copy[0], o);
  EXPECT_TRUE(second.was_cached());
  EXPECT_EQ(first.path(), second.path());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mtlgen::verify
