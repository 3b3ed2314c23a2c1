// Incremental verification (result_cache.h): a second run with nothing changed reports passing
// cases from the cache without running them; a failing case always runs; the cache can be off.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/exit_code.h"
#include "verify/verify.h"

namespace fs = std::filesystem;
using namespace mtlgen;

namespace result_cache_test {  // named: unity builds (tests/CMakeLists.txt)

// A copy of `spec` no earlier run has seen (a comment line makes its bytes, and so its key, new).
fs::path fresh_copy(const fs::path& spec, const std::string& tag) {
  fs::path dir = fs::temp_directory_path() / ("mtlgen-result-cache-test-" + tag);
  fs::create_directories(dir);
  std::ifstream in(spec);
  std::stringstream text;
  text << in.rdbuf();
  fs::path copy = dir / spec.filename();
  auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  std::ofstream(copy) << text.str() << "# result_cache_test " << ::getpid() << " " << now << "\n";
  return copy;
}

struct VerifyRun {
  int exit_code;
  std::string printed;
};

VerifyRun verify(const fs::path& spec, bool result_cache = true) {
  verify::VerifyOptions o;
  o.inputs = {spec.string()};
  o.module.cache_dir = MTLGEN_TEST_CACHE_DIR;
  o.result_cache = result_cache;
  std::ostringstream out, err;
  int rc = verify::run_verify(o, out, err);
  return {rc, out.str() + err.str()};
}

TEST(ResultCache, ASecondRunReportsPassingCasesFromTheCache) {
  fs::path spec = fresh_copy("tests/verify/twins/simd_sum_only.yaml", "twin");
  VerifyRun first = verify(spec);
  ASSERT_EQ(first.exit_code, support::kOk) << first.printed;
  EXPECT_EQ(first.printed.find("from the result cache"), std::string::npos) << first.printed;
  VerifyRun second = verify(spec);
  EXPECT_EQ(second.exit_code, support::kOk) << second.printed;
  EXPECT_NE(second.printed.find("1 passed (1 from the result cache)"), std::string::npos) << second.printed;
  VerifyRun forced = verify(spec, false);
  EXPECT_EQ(forced.exit_code, support::kOk) << forced.printed;
  EXPECT_EQ(forced.printed.find("from the result cache"), std::string::npos) << forced.printed;
}

TEST(ResultCache, AFailingCaseRunsEveryTime) {
  fs::path spec = fresh_copy("tests/verify/bugs/simd_sum_only.yaml", "bug");
  for (int run = 0; run < 2; ++run) {
    VerifyRun r = verify(spec);
    EXPECT_EQ(r.exit_code, support::kVerifyFailed) << r.printed;
    EXPECT_EQ(r.printed.find("from the result cache"), std::string::npos) << r.printed;
  }
}

}  // namespace result_cache_test
