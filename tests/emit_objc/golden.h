#pragma once
// Snapshot comparison shared by the emitter test suites: the files an emitter produced must equal,
// byte for byte, those under a golden directory. With MTLGEN_UPDATE_GOLDEN=1 in the environment
// the directory is rewritten instead (and the test reports itself skipped), so after an intended
// change: `MTLGEN_UPDATE_GOLDEN=1 ctest --test-dir build -R 'emit_objc|emit_manifest'`, then review
// the diff. Tests run from the source root, so golden paths are relative to it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/driver.h"
#include "emit_common/emitter.h"
#include "support/output_set.h"

namespace mtlgen::testing {

namespace fs = std::filesystem;

inline std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline bool updating_golden() {
  const char* update = std::getenv("MTLGEN_UPDATE_GOLDEN");
  return update != nullptr && std::string(update) == "1";
}

// Every regular file under `dir`, relative and '/'-separated.
inline std::vector<std::string> files_under(const fs::path& dir) {
  std::vector<std::string> files;
  if (!fs::is_directory(dir)) return files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) files.push_back(fs::relative(e.path(), dir).generic_string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Compares `files` with `golden`, or rewrites `golden` when MTLGEN_UPDATE_GOLDEN=1.
inline void expect_matches_golden(const support::OutputSet& files, const fs::path& golden) {
  if (updating_golden()) {
    fs::remove_all(golden);
    support::write_outputs(files, golden);
    GTEST_SKIP() << "rewrote " << golden.generic_string();
  }
  std::vector<std::string> emitted;
  for (const auto& [path, content] : files.files()) emitted.push_back(path);
  EXPECT_EQ(files_under(golden), emitted) << "golden directory " << golden.generic_string()
                                          << " has extra or missing files; run with MTLGEN_UPDATE_GOLDEN=1";
  for (const auto& [path, content] : files.files()) {
    const fs::path snapshot = golden / path;
    if (!fs::exists(snapshot)) continue;  // reported above
    EXPECT_EQ(read_file(snapshot), content) << "emitted " << path << " differs from " << snapshot.generic_string();
  }
}

// Loads specs as the CLI does; fails the test on any diagnostic.
inline std::vector<ir::Kernel> load(const std::vector<std::string>& inputs) {
  support::Diagnostics diags;
  auto kernels = driver::load_library(inputs, diags);
  EXPECT_FALSE(diags.has_errors()) << diags.format_all();
  return kernels;
}

// What one registered emitter writes for `kernels` (those it takes): each kernel's files, then
// the library's.
inline support::OutputSet run_emitter(const std::string& name, const std::vector<ir::Kernel>& kernels) {
  return emit::run_emitters({name}, kernels);
}

// Spec files of the snapshot cases: every shipped spec and the extra inputs under `extra_dir`.
// The shipped specs are pinned byte for byte by out_is_fresh (tests/emit); snapshots here cover
// the extra specs that exercise what the shipped ones do not.
inline std::vector<std::string> snapshot_specs(const std::string& extra_dir) {
  std::vector<std::string> specs;
  for (const char* dir : {extra_dir.c_str()}) {
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() == ".yaml") specs.push_back(e.path().generic_string());
    }
  }
  std::sort(specs.begin(), specs.end());
  return specs;
}

inline std::string stem(const std::string& path) { return fs::path(path).stem().string(); }

}  // namespace mtlgen::testing
