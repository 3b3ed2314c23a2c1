// A hand-written file's simulator module compiles no explicit instantiation (msl::
// drop_explicit_instantiations through emit::emit_sim_variants): the launchers' calls instantiate
// the variants that run, the instantiations' lines are blank in the module's copy, and findings
// still name the user's lines.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
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
  std::vector<std::string> copy;  // the module's copy of kernels.metal, by line (from 0)
};

// Verifies tests/verify/instantiations/<name>.yaml in a cache of its own, so that its one module
// can be read back.
ModuleRun verify_in_fresh_cache(const std::string& name) {
  fs::path cache = fs::temp_directory_path() / ("mtlgen-pruned-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(cache);
  verify::VerifyOptions o;
  o.inputs = {"tests/verify/instantiations/" + name + ".yaml"};
  o.module.cache_dir = cache.string();
  o.result_cache = false;
  o.quiet = true;
  std::ostringstream out, err;
  ModuleRun run;
  run.exit_code = verify::run_verify(o, out, err);
  run.printed = out.str() + err.str();
  for (const auto& entry : fs::directory_iterator(cache / "sim")) {
    std::ifstream copy(entry.path() / "sim" / name / (name + ".metal"));
    for (std::string line; std::getline(copy, line);) run.copy.push_back(line);
  }
  fs::remove_all(cache);
  return run;
}

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

}  // namespace
