// Generation as users rely on it: deterministic, atomic, incremental, confined to the output dir.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "cli/driver.h"
#include "support/output_set.h"

namespace fs = std::filesystem;
using namespace mtlgen;

namespace {

fs::path temp_dir(const std::string& tag) {
  fs::path d = fs::temp_directory_path() / ("mtlgen-" + tag + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    files[fs::relative(e.path(), dir).generic_string()] = s.str();
  }
  return files;
}

TEST(Generate, TwoRunsAreByteIdentical) {
  fs::path a = temp_dir("a"), b = temp_dir("b");
  std::ostringstream out, err;
  ASSERT_EQ(driver::run_generate({"specs"}, a, true, out, err), driver::kOk) << err.str();
  ASSERT_EQ(driver::run_generate({"specs"}, b, true, out, err), driver::kOk) << err.str();
  EXPECT_EQ(snapshot(a), snapshot(b));
  EXPECT_FALSE(snapshot(a).empty());
}

TEST(Generate, UnchangedFilesAreNotRewritten) {
  fs::path dir = temp_dir("incremental");
  std::ostringstream out, err;
  ASSERT_EQ(driver::run_generate({"specs/rms_norm.yaml"}, dir, false, out, err), driver::kOk);
  fs::path metal = dir / "rms_norm" / "rms_norm.metal";
  auto before = fs::last_write_time(metal);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::ostringstream again;
  ASSERT_EQ(driver::run_generate({"specs/rms_norm.yaml"}, dir, false, again, err), driver::kOk);
  EXPECT_EQ(fs::last_write_time(metal), before);
  EXPECT_NE(again.str().find("0 files written"), std::string::npos) << again.str();
}

TEST(Generate, RejectedSpecWritesNothing) {
  fs::path dir = temp_dir("rejected");
  fs::path spec = dir / "broken.yaml";
  std::ofstream(spec) << "name: broken\ndispach: {}\n";
  fs::path out_dir = dir / "out";
  std::ostringstream out, err;
  EXPECT_EQ(driver::run_generate({spec.string()}, out_dir, true, out, err), driver::kSpecErrors);
  EXPECT_FALSE(fs::exists(out_dir));
  EXPECT_NE(err.str().find("did you mean `dispatch`?"), std::string::npos) << err.str();
}

// Restores an environment variable at the end of a test (CI runs the suite with a cache set).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() { old_ ? ::setenv(name_, old_->c_str(), 1) : ::unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

size_t file_count(const fs::path& dir) {
  if (!fs::exists(dir)) return 0;
  return std::distance(fs::directory_iterator(dir), fs::directory_iterator());
}

TEST(Generate, LibclangPassesAreKeptOnlyInAConfiguredCacheAndErrorsEveryTime) {
  fs::path dir = temp_dir("check-cache");
  fs::path checked = dir / "cache" / "checked";
  std::ostringstream out, err;
  {
    ScopedEnv cache("MTLGEN_CACHE_DIR", (dir / "cache").string());
    ASSERT_EQ(driver::run_generate({"specs/rms_norm.yaml"}, dir / "a", true, out, err), driver::kOk) << err.str();
    EXPECT_EQ(file_count(checked), 1u);
    ASSERT_EQ(driver::run_generate({"specs/rms_norm.yaml"}, dir / "b", true, out, err), driver::kOk) << err.str();
    EXPECT_EQ(file_count(checked), 1u);
    for (int run = 0; run < 2; ++run) {  // a failure is never kept: it is reported on every run
      std::ostringstream failed;
      EXPECT_EQ(driver::run_generate({"tests/check_msl/body_errors/undeclared_identifier.yaml"}, dir / "c", true,
                                     out, failed),
                driver::kSpecErrors);
      EXPECT_NE(failed.str().find("undeclared_identifier.yaml:"), std::string::npos) << failed.str();
    }
    EXPECT_EQ(file_count(checked), 1u);
  }
  ScopedEnv no_cache("MTLGEN_CACHE_DIR", "");
  ASSERT_EQ(driver::run_generate({"specs/argmax.yaml"}, dir / "d", true, out, err), driver::kOk) << err.str();
  EXPECT_EQ(file_count(checked), 1u);
}

TEST(Generate, EveryFileSaysItIsGenerated) {
  support::Diagnostics diags;
  auto kernels = driver::load_library({"specs"}, diags);
  ASSERT_FALSE(diags.has_errors()) << diags.format_all();
  support::OutputSet files = driver::generate(kernels);
  for (const auto& [path, content] : files.files()) {
    std::string head = content.substr(0, 400);
    EXPECT_NE(head.find("mtlgen"), std::string::npos) << path;
    EXPECT_TRUE(head.find("Do not edit") != std::string::npos || head.find("do not edit") != std::string::npos ||
                head.find("do_not_edit") != std::string::npos)
        << path;
  }
}

TEST(OutputSet, RefusesPathsOutsideTheOutputDirectory) {
  support::OutputSet set;
  EXPECT_THROW(set.add("../escape.txt", "x"), std::logic_error);
  EXPECT_THROW(set.add("/abs.txt", "x"), std::logic_error);
  EXPECT_THROW(set.add("a/../../b", "x"), std::logic_error);
  EXPECT_NO_THROW(set.add("a/b.txt", "x"));
}

TEST(OutputSet, WritesAtomicallyWithoutLeavingTempFiles) {
  fs::path dir = temp_dir("atomic");
  EXPECT_TRUE(support::write_file_atomically(dir / "f.txt", "one"));
  EXPECT_FALSE(support::write_file_atomically(dir / "f.txt", "one"));
  EXPECT_TRUE(support::write_file_atomically(dir / "f.txt", "two"));
  EXPECT_EQ(snapshot(dir).size(), 1u);
  EXPECT_EQ(snapshot(dir)["f.txt"], "two");
}

}  // namespace
