// Snapshot tests: every file every emitter produces for tests/emit/in/<name>.yaml must equal
// tests/emit/golden/<name>/<file>. Run with MTLGEN_UPDATE_GOLDEN=1 to rewrite the snapshots.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/driver.h"
#include "support/output_set.h"

namespace fs = std::filesystem;
using namespace mtlgen;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> specs_under(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, MatchesSnapshot) {
  const std::string name = GetParam();
  support::Diagnostics diags;
  auto kernels = driver::load_library({(fs::path("tests/emit/in") / (name + ".yaml")).string()}, diags);
  ASSERT_FALSE(diags.has_errors()) << diags.format_all();
  support::OutputSet files = driver::generate(kernels);
  fs::path golden = fs::path("tests/emit/golden") / name;
  if (const char* update = std::getenv("MTLGEN_UPDATE_GOLDEN"); update && std::string(update) == "1") {
    fs::remove_all(golden);
    support::write_outputs(files, golden);
    GTEST_SKIP() << "rewrote " << golden;
  }
  size_t on_disk = 0;
  for (const auto& e : fs::recursive_directory_iterator(golden)) on_disk += e.is_regular_file();
  EXPECT_EQ(on_disk, files.files().size()) << "golden directory has extra or missing files";
  for (const auto& [path, content] : files.files()) {
    ASSERT_TRUE(fs::exists(golden / path)) << "no snapshot " << (golden / path) << "; run with MTLGEN_UPDATE_GOLDEN=1";
    EXPECT_EQ(read(golden / path), content) << "emitted " << path << " differs from its snapshot";
  }
}

INSTANTIATE_TEST_SUITE_P(Emitters, Golden, ::testing::ValuesIn(specs_under("tests/emit/in")),
                         [](const auto& info) { return info.param; });

}  // namespace
