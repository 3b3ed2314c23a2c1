// A hand-written file's simulator kernel object compiles no explicit instantiation (msl::
// drop_explicit_instantiations through emit::emit_sim_source_object): the launchers' calls
// instantiate the entry points, the instantiations' lines are blank in the object's copy, and
// findings still name the user's lines. The object names no spec: every kernel of the file links
// the one object.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <unistd.h>

#include "support/exit_code.h"
#include "verify/verify.h"

namespace fs = std::filesystem;
using namespace mtlgen;

namespace {

struct ModuleRun {
  int exit_code = 0;
  std::string printed;
  std::vector<std::string> copy;  // the kernel object's copy of kernels.metal, by the user's line
                                  // (from 0), its kernels' loop forms left out
  std::vector<std::string> compile_log;  // the module's
};

ModuleRun verify_in_cache(const std::string& name, const fs::path& cache) {
  verify::VerifyOptions o;
  o.inputs = {"tests/verify/instantiations/" + name + ".yaml"};
  o.module.cache_dir = cache.string();
  o.result_cache = false;
  o.quiet = true;
  std::ostringstream out, err;
  ModuleRun run;
  run.exit_code = verify::run_verify(o, out, err);
  run.printed = out.str() + err.str();
  for (const auto& entry : fs::directory_iterator(cache / "kernel")) {
    std::ifstream copy(entry.path() / "sim" / "source" / "kernels.metal");
    bool in_form = false;  // up to the `#line N` that ends it (ir::with_loop_forms): N is the next line
    for (std::string line; std::getline(copy, line);) {
      if (line.rfind("// The loop form of `", 0) == 0) in_form = true;
      if (in_form && line.rfind("#define MTLSIM_LOOPS_", 0) == 0 && std::getline(copy, line)) {
        run.copy.resize(std::stoul(line.substr(std::string("#line ").size())) - 1);
        in_form = false;
      } else if (!in_form) {
        run.copy.push_back(line);
      }
    }
  }
  for (const auto& entry : fs::directory_iterator(cache / "sim")) {
    if (entry.path().filename().string().rfind(name + "-", 0) != 0) continue;
    std::ifstream log(entry.path() / "compile.log");
    for (std::string line; std::getline(log, line);) run.compile_log.push_back(line);
  }
  return run;
}

fs::path fresh_cache(const std::string& name) {
  fs::path cache = fs::temp_directory_path() / ("mtlgen-pruned-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(cache);
  return cache;
}

// Verifies tests/verify/instantiations/<name>.yaml in a cache of its own, so that its one module
// and kernel object can be read back.
ModuleRun verify_in_fresh_cache(const std::string& name) {
  const fs::path cache = fresh_cache(name);
  ModuleRun run = verify_in_cache(name, cache);
  fs::remove_all(cache);
  return run;
}

size_t kernel_objects(const fs::path& cache) {
  size_t n = 0;
  for (const auto& entry : fs::recursive_directory_iterator(cache / "kernel")) n += entry.path().filename() == "kernel.o";
  return n;
}

size_t kernel_compiles(const ModuleRun& run) {
  return std::count_if(run.compile_log.begin(), run.compile_log.end(),
                       [](const std::string& line) { return line.find("-c sim/source/launcher.cpp") != std::string::npos; });
}

bool compiles_the_kernel(const ModuleRun& run) { return kernel_compiles(run) > 0; }

TEST(PrunedInstantiations, AFindingNamesTheUsersLineAndNoInstantiationStays) {
  ModuleRun run = verify_in_fresh_cache("shift");
  EXPECT_EQ(run.exit_code, support::kVerifyFailed) << run.printed;
  EXPECT_NE(run.printed.find("out-of-bounds write of element 64 of buffer `y`"), std::string::npos) << run.printed;
  EXPECT_NE(run.printed.find("(tests/verify/instantiations/kernels.metal:14)"), std::string::npos) << run.printed;
  ASSERT_GE(run.copy.size(), 27u) << run.printed;
  EXPECT_EQ(run.copy[13], "  y[i + K] = x[i];");
  for (int line : {23, 24, 25, 26, 27}) EXPECT_EQ(run.copy[line - 1], "") << line;  // shift_float_1's too
  EXPECT_EQ(run.copy[20].rfind("#define instantiate_all(tname, type)", 0), 0u);      // definitions stay
}

// The variants run (scale_float, scale_half, from invocations on lines 24 and 25) pass without
// the invocations that instantiate them.
TEST(PrunedInstantiations, TheLaunchersInstantiateWhatRuns) {
  ModuleRun run = verify_in_fresh_cache("scale");
  EXPECT_EQ(run.exit_code, support::kOk) << run.printed;
  ASSERT_GE(run.copy.size(), 27u) << run.printed;
  for (int line : {23, 24, 25, 26, 27}) EXPECT_EQ(run.copy[line - 1], "") << line;
  EXPECT_NE(run.printed.find("2 passed"), std::string::npos) << run.printed;
}

// scale.yaml and shift.yaml are two kernels of one file: the first verify compiles the file's
// kernel object with every entry point (the file has few), the second links it, compiling none.
TEST(SharedKernelObject, AnotherKernelOfTheFileCompilesNoKernel) {
  const fs::path cache = fresh_cache("shared");
  ModuleRun scale = verify_in_cache("scale", cache);
  EXPECT_EQ(scale.exit_code, support::kOk) << scale.printed;
  EXPECT_TRUE(compiles_the_kernel(scale)) << scale.printed;
  ModuleRun shift = verify_in_cache("shift", cache);
  EXPECT_EQ(shift.exit_code, support::kVerifyFailed) << shift.printed;  // its planted bug, found all the same
  EXPECT_NE(shift.printed.find("(tests/verify/instantiations/kernels.metal:14)"), std::string::npos) << shift.printed;
  EXPECT_FALSE(compiles_the_kernel(shift)) << shift.printed;
  EXPECT_EQ(kernel_objects(cache), 1u);
  fs::remove_all(cache);
}

// clang_only.metal's `odd` does not compile with g++: the object of every entry point, tried with
// the kernels' loop forms, is refused (its g++ output kept beside it, refused_loop_forms.log: a
// form's per-instantiation check may be what g++ refuses), and `twice` gets an object of its own
// entry, with its form. The refusal is remembered: a module built again does not try the whole
// file again.
TEST(SharedKernelObject, AnEntryGxxRefusesCostsTheOthersNothing) {
  const fs::path cache = fresh_cache("refused");
  ModuleRun first = verify_in_cache("twice", cache);
  EXPECT_EQ(first.exit_code, support::kOk) << first.printed;
  EXPECT_EQ(kernel_compiles(first), 2u) << first.printed;
  size_t refusals = 0;
  for (const auto& entry : fs::directory_iterator(cache / "kernel")) {
    if (!fs::exists(entry.path() / "refused_loop_forms.log")) continue;
    ++refusals;
    std::ifstream log(entry.path() / "refused_loop_forms.log");
    std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("__builtin_elementwise_abs"), std::string::npos) << text;
  }
  EXPECT_EQ(refusals, 1u);
  EXPECT_EQ(kernel_objects(cache), 1u);
  fs::remove_all(cache / "sim");
  for (const auto& entry : fs::directory_iterator(cache / "kernel"))
    if (fs::exists(entry.path() / "kernel.o")) fs::remove_all(entry.path());
  ModuleRun again = verify_in_cache("twice", cache);
  EXPECT_EQ(again.exit_code, support::kOk) << again.printed;
  EXPECT_EQ(kernel_compiles(again), 1u) << again.printed;
  fs::remove_all(cache);
}

}  // namespace
