// doctor.sh against stand-ins for Apple's tools (tests/package/fake; $FAKE_SCENARIO picks the Mac):
// each broken setup is named and gets its fix; a good one passes and reports the MSL versions the
// compiler accepts against those the kernels need.
#include "package_test_util.h"

namespace mtlgen::testing {
namespace {

class Doctor : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_ = shared_tree();
    scratch_ = scratch_dir();
  }

  // doctor.sh with the fakes first on PATH and `env` (VAR=value ...) set.
  Command doctor(const std::string& env, const std::string& path = "") const {
    std::string p = path.empty() ? fake_tools() + ":/usr/bin:/bin" : path;
    return run("cd " + sh_quote(tree_) + " && env PATH=" + sh_quote(p) + " " + env + " bash doctor.sh");
  }

  fs::path tree_;
  fs::path scratch_;
};

bool has(const Command& r, const std::string& part) { return r.output.find(part) != std::string::npos; }

TEST_F(Doctor, AllGood) {
  Command r = doctor("FAKE_SCENARIO=good");
  EXPECT_EQ(r.rc, 0) << r.output;
  EXPECT_TRUE(has(r, "ok    Xcode 16.2")) << r.output;
  EXPECT_TRUE(has(r, "ok    the compiler accepts MSL: 2.4 3.0 3.1 3.2\n")) << r.output;
  EXPECT_TRUE(has(r, "ok    MSL 3.0 (macOS 13.0): scale\n")) << r.output;
  EXPECT_TRUE(has(r, "ok    MSL 3.1 (macOS 14.0): shift_bf16\n")) << r.output;
  EXPECT_TRUE(has(r, "doctor: ready to build small 2.0")) << r.output;
  EXPECT_FALSE(has(r, "FAIL")) << r.output;
}

TEST_F(Doctor, NoXcode) {
  fs::path bin = scratch_ / "mac-without-xcode";
  fs::create_directories(bin);
  for (const char* tool : {"uname", "sw_vers"}) fs::create_symlink(fs::path(fake_tools()) / tool, bin / tool);
  Command r = doctor("", bin.string() + ":/usr/bin:/bin");
  EXPECT_EQ(r.rc, 1) << r.output;
  EXPECT_TRUE(has(r, "FAIL  xcrun not found")) << r.output;
  EXPECT_TRUE(has(r, "fix: install Xcode")) << r.output;
}

TEST_F(Doctor, CommandLineToolsOnly) {
  Command r = doctor("FAKE_DEVELOPER_DIR=/Library/Developer/CommandLineTools");
  EXPECT_EQ(r.rc, 1) << r.output;
  EXPECT_TRUE(has(r, "FAIL  the developer directory is the Command Line Tools")) << r.output;
  EXPECT_TRUE(has(r, "fix: install Xcode, then: sudo xcode-select -s /Applications/Xcode.app/Contents/Developer"))
      << r.output;
}

TEST_F(Doctor, Xcode26WithoutTheMetalToolchain) {
  Command r = doctor("FAKE_SCENARIO=no_toolchain");
  EXPECT_EQ(r.rc, 1) << r.output;
  EXPECT_TRUE(has(r, "FAIL  Xcode 26 has no Metal toolchain")) << r.output;
  EXPECT_TRUE(has(r, "fix: xcodebuild -downloadComponent MetalToolchain\n")) << r.output;
}

TEST_F(Doctor, Xcode26ToolchainThatXcrunDoesNotFind) {
  Command r = doctor("FAKE_SCENARIO=toolchain_not_selected");
  EXPECT_EQ(r.rc, 1) << r.output;
  EXPECT_TRUE(has(r, "but xcrun does not find it")) << r.output;
  EXPECT_TRUE(has(r, "fix: export TOOLCHAINS=com.apple.dt.toolchain.Metal.32023.883")) << r.output;
  Command fixed = doctor("FAKE_SCENARIO=toolchain_not_selected TOOLCHAINS=com.apple.dt.toolchain.Metal.32023.883");
  EXPECT_EQ(fixed.rc, 0) << fixed.output;  // the fix it printed works
}

TEST_F(Doctor, CompilerTooOldForMsl31) {
  Command r = doctor("FAKE_SCENARIO=old_compiler");
  EXPECT_EQ(r.rc, 1) << r.output;
  EXPECT_TRUE(has(r, "ok    the compiler accepts MSL: 2.4 3.0\n")) << r.output;
  EXPECT_TRUE(has(r, "ok    MSL 3.0 (macOS 13.0): scale\n")) << r.output;
  EXPECT_TRUE(has(r, "FAIL  the compiler rejects -std=metal3.1")) << r.output;
  EXPECT_TRUE(has(r, "which shift_bf16 need")) << r.output;
  EXPECT_TRUE(has(r, "fix: MSL 3.1 needs Xcode 15 or later")) << r.output;
  EXPECT_TRUE(has(r, "doctor: 1 problem(s)")) << r.output;
}

TEST_F(Doctor, NotAMacAndAnOldMacos) {
  Command linux_host = run("cd " + sh_quote(tree_) + " && bash doctor.sh");
  EXPECT_EQ(linux_host.rc, 1);
  EXPECT_TRUE(has(linux_host, "not macOS")) << linux_host.output;
  Command old = doctor("FAKE_MACOS_VERSION=13.6");
  EXPECT_EQ(old.rc, 0) << old.output;  // compiling works; running needs macOS 14
  EXPECT_TRUE(has(old, "warn  macOS 13.6: the kernels compile here but run on macOS 14.0 or later only")) << old.output;
}

}  // namespace
}  // namespace mtlgen::testing
