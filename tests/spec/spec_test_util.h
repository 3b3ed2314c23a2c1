#pragma once
// Shared by the spec front-end tests: temporary spec files, the folders of sample specs, and the
// `# expect:` line that states what a rejected spec must report.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "spec/front_end.h"
#include "support/diagnostics.h"

namespace mtlgen::spec::testing {

namespace fs = std::filesystem;

inline fs::path source_dir() { return MTLGEN_SOURCE_DIR; }
inline fs::path spec_test_dir() { return MTLGEN_SPEC_TEST_DIR; }

inline std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::string first_line(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The *.yaml files of one folder, sorted, as (stem, path).
inline std::vector<fs::path> yaml_files(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().extension() == ".yaml") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A fresh directory under the system temp dir, removed with its contents on destruction.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("mtlgen_spec_tests_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }
  fs::path write(const std::string& name, const std::string& text) const {
    fs::path p = path_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

 private:
  fs::path path_;
};

// Loads spec text through the whole front end, as file `spec.yaml`.
struct Loaded {
  std::optional<ir::Kernel> kernel;
  support::Diagnostics diags;
};

inline Loaded load_text(const std::string& text, const YamlLimits& limits = {}) {
  TempDir dir;
  Loaded out;
  out.kernel = load_spec(dir.write("spec.yaml", text).string(), "spec.yaml", out.diags, limits);
  return out;
}

// A small valid spec that tests vary by text substitution.
inline const char* kMinimalSpec = R"yaml(name: scale
dims:
  n: {min: 1}
tunables:
  TG: {values: [32, 64], default: 32}
buffers:
  x: {type: float, shape: [n], access: read}
  y: {type: float, shape: [n], access: write}
dispatch:
  threadgroups: ["ceil_div(n, TG)"]
  threads_per_threadgroup: [TG]
body: |
  if (gid < n) y[gid] = x[gid] * 2.0f;
reference: |
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * 2.0f;
tests:
  cases:
    - {name: small, dims: {n: 5}}
)yaml";

// `# expect: <kind> <line>:<col>[; also: <kind>, ...][; message: <text>][; hint: <text>]
//            [; missing-hint: <why>][; known-bug: <what>]`
//   kind, line:col  the diagnostic that must be reported (kinds as support::to_string prints them)
//   also            kinds of further errors the file is allowed to produce (none otherwise)
//   message / hint  text that the diagnostic's message / hint must contain
//   missing-hint    the diagnostic has no hint today (a generator bug); its hint test is disabled
//   known-bug       the front end does not report this at all today; the whole test is disabled
struct Expectation {
  std::string kind;
  int line = 0;
  int column = 0;
  std::vector<std::string> also;
  std::string message;
  std::string hint;
  std::string missing_hint;
  std::string known_bug;
};

inline std::string trim(std::string s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

inline std::optional<Expectation> parse_expectation(const std::string& line, std::string& error) {
  const std::string prefix = "# expect:";
  if (line.rfind(prefix, 0) != 0) {
    error = "the first line must start with `# expect:`";
    return std::nullopt;
  }
  std::vector<std::string> clauses;
  std::stringstream rest(line.substr(prefix.size()));
  for (std::string c; std::getline(rest, c, ';');) clauses.push_back(trim(c));
  Expectation x;
  std::istringstream head(clauses.empty() ? "" : clauses[0]);
  std::string where;
  char colon = 0;
  head >> x.kind >> where;
  std::istringstream loc(where);
  if (x.kind.empty() || !(loc >> x.line >> colon >> x.column) || colon != ':') {
    error = "expected `# expect: <kind> <line>:<col>`";
    return std::nullopt;
  }
  for (size_t i = 1; i < clauses.size(); ++i) {
    size_t sep = clauses[i].find(':');
    std::string key = trim(clauses[i].substr(0, sep));
    std::string value = sep == std::string::npos ? "" : trim(clauses[i].substr(sep + 1));
    if (key == "also") {
      std::stringstream kinds(value);
      for (std::string k; std::getline(kinds, k, ',');) x.also.push_back(trim(k));
    } else if (key == "message") {
      x.message = value;
    } else if (key == "hint") {
      x.hint = value;
    } else if (key == "missing-hint") {
      x.missing_hint = value;
    } else if (key == "known-bug") {
      x.known_bug = value;
    } else {
      error = "unknown clause `" + key + "`";
      return std::nullopt;
    }
  }
  return x;
}

}  // namespace mtlgen::spec::testing
