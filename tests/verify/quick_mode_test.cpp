// Quick mode (VerifyOptions::quick_threadgroups): a sample of a large grid's threadgroups runs, what
// they wrote is compared, and the report says the coverage is partial.
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "support/exit_code.h"
#include "verify/dispatch_setup.h"
#include "verify/verify.h"

using namespace mtlgen;

namespace quick_mode_test {  // named: unity builds (tests/CMakeLists.txt)

mtlsim::HostDispatch grid_of(uint64_t x, uint64_t y = 1) {
  mtlsim::HostDispatch host;
  host.threadgroups[0] = x;
  host.threadgroups[1] = y;
  return host;
}

TEST(QuickMode, SamplesTheFirstTheLastAndASeededRest) {
  auto sample = verify::sample_threadgroups(grid_of(1000, 3), 16, 7);
  ASSERT_EQ(sample.size(), 16u);
  EXPECT_EQ(sample.front(), 0u);
  EXPECT_EQ(sample.back(), 2999u);
  EXPECT_EQ(std::set<uint64_t>(sample.begin(), sample.end()).size(), 16u);
  EXPECT_EQ(sample, verify::sample_threadgroups(grid_of(1000, 3), 16, 7));  // seeded: the same every run
  EXPECT_NE(sample, verify::sample_threadgroups(grid_of(1000, 3), 16, 8));
  EXPECT_TRUE(verify::sample_threadgroups(grid_of(16), 16, 7).empty());  // small grids run whole
  EXPECT_TRUE(verify::sample_threadgroups(grid_of(1000), 0, 7).empty());
}

struct VerifyRun {
  int exit_code;
  std::string printed;
};

VerifyRun verify_quick(const std::string& spec, uint64_t quick) {
  verify::VerifyOptions o;
  o.inputs = {spec};
  o.module.cache_dir = MTLGEN_TEST_CACHE_DIR;
  o.quick_threadgroups = quick;
  o.result_cache = false;
  std::ostringstream out, err;
  int rc = verify::run_verify(o, out, err);
  return {rc, out.str() + err.str()};
}

TEST(QuickMode, ComparesWhatTheSampleWroteAndSaysCoverageIsPartial) {
  VerifyRun r = verify_quick("specs/matvec.yaml", 4);
  EXPECT_EQ(r.exit_code, support::kOk) << r.printed;
  EXPECT_NE(r.printed.find("partial (--quick): 4 of 32 threadgroups, 16 of 128 elements of `y` compared"), std::string::npos)
      << r.printed;
  EXPECT_NE(r.printed.find("ran a sample of their threadgroups (--quick 4): partial coverage"), std::string::npos)
      << r.printed;
}

// The last threadgroup is always in the sample: the overrun there is still found.
TEST(QuickMode, StillRunsTheLastThreadgroup) {
  VerifyRun r = verify_quick("tests/verify/bugs/store_past_end.yaml", 2);
  EXPECT_EQ(r.exit_code, support::kVerifyFailed) << r.printed;
  EXPECT_NE(r.printed.find("out-of-bounds read of element 1000 of buffer `x`"), std::string::npos) << r.printed;
}

}  // namespace quick_mode_test
