#pragma once
// What the package suites share: a scratch directory per test, running a command line, and the
// package of tests/package/in built in memory or by the CLI.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include "golden.h"
#include "package/package.h"

namespace mtlgen::testing {

namespace fs = std::filesystem;

inline const char* kPackageInputs = "tests/package/in";

// A fresh, empty directory for the running test: <build>/tests/package/work/<suite>.<test>.
inline fs::path scratch_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path dir = fs::path(MTLGEN_PACKAGE_WORK) / (std::string(info->test_suite_name()) + "." + info->name());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

struct Command {
  int rc = -1;
  std::string output;  // stdout and stderr
};

// Runs `command` through /bin/sh, stderr merged into stdout.
inline Command run(const std::string& command) {
  Command r;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) r.output.append(buffer.data(), n);
  int status = ::pclose(pipe);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline std::string sh_quote(const fs::path& p) { return "'" + p.string() + "'"; }

inline std::string fake_tools() { return (fs::current_path() / "tests/package/fake").string(); }

// The package of tests/package/in, in memory.
inline package::Package build_package(const package::Options& options) {
  auto kernels = load({kPackageInputs});
  return package::build(kernels, driver::generate(kernels), options);
}

// `mtlgen package tests/package/in -o <dir>/out --name small --version 2.0`; the tree's path.
inline fs::path package_with_cli(const fs::path& dir) {
  Command r = run(std::string(MTLGEN_BINARY) + " package " + kPackageInputs + " -o " + sh_quote(dir / "out") +
              " --name small --version 2.0 -q");
  EXPECT_EQ(r.rc, 0) << r.output;
  return dir / "out" / "small-2.0";
}

// The package every recipe and doctor test reads (never writes): made once by the CTest fixture
// `package.shared_tree` (or here, when the binary runs on its own).
inline fs::path shared_tree() {
  fs::path dir = fs::path(MTLGEN_PACKAGE_WORK) / "shared";
  if (!fs::exists(dir / "out/small-2.0/manifest.json")) package_with_cli(dir);
  return dir / "out" / "small-2.0";
}

}  // namespace mtlgen::testing
