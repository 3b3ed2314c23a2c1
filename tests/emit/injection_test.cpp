// Spec text that lands in generated code (summary, docs, messages, the spec's path) stays inside
// its comment or string literal, whatever characters it holds: a spec is data, never code.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/driver.h"
#include "emit_common/cpp_text.h"
#include "spec/front_end.h"

namespace fs = std::filesystem;
using namespace mtlgen;

namespace {

// Each hostile text carries the marker `INJECTED` so that every place it reaches can be checked.
const char* kHostileSpec = R"yaml(name: hostile
summary: "Scales.\n#error INJECTED summary */ int INJECTED_a; /* ??/\\"
dims:
  n: {min: 1, doc: "rows\r#define INJECTED_doc 1\n*/ INJECTED_b \\"}
scalars:
  eps: {type: float, default: 1, doc: "eps\n#error INJECTED scalar doc"}
preconditions:
  - {check: "n < 100000", message: "say \"hi\"\n#error INJECTED message \\ ??/"}
buffers:
  x: {type: float, shape: [n], access: read}
  y: {type: float, shape: [n], access: write}
dispatch:
  threadgroups: ["ceil_div(n, 32)"]
  threads_per_threadgroup: [32]
body: |
  if (gid < n) y[gid] = x[gid] * eps;
reference: |
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * eps;
tests:
  cases:
    - {name: small, dims: {n: 5}}
)yaml";

support::OutputSet generate_hostile() {
  fs::path dir = fs::temp_directory_path() / ("mtlgen-injection-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "hostile.yaml") << kHostileSpec;
  support::Diagnostics diags;
  auto kernel = spec::load_spec((dir / "hostile.yaml").string(), "hostile.yaml", diags);
  fs::remove_all(dir);
  EXPECT_TRUE(kernel) << diags.format_all();
  if (!kernel) return {};
  return driver::generate({*kernel});
}

std::string trim_left(const std::string& line) {
  size_t b = line.find_first_not_of(" \t");
  return b == std::string::npos ? "" : line.substr(b);
}

// Every line of generated C-family code that holds the marker is a `//` comment, or a string
// literal in which the text stayed on its line (its newline escaped), and nothing closes a
// comment early or splices the next line into it.
TEST(Injection, HostileSpecTextStaysInCommentsAndStrings) {
  support::OutputSet files = generate_hostile();
  ASSERT_FALSE(files.files().empty());
  int lines_with_marker = 0;
  for (const auto& [path, content] : files.files()) {
    if (path.ends_with(".json")) continue;  // JSON escaping is nlohmann's
    std::istringstream in(content);
    for (std::string line; std::getline(in, line);) {
      if (line.find("INJECTED") == std::string::npos) continue;
      ++lines_with_marker;
      std::string code = trim_left(line);
      bool comment = code.rfind("//", 0) == 0;
      bool in_string = line.find("\"say \\\"hi\\\"\\n#error INJECTED message") != std::string::npos;
      EXPECT_TRUE(comment || in_string || line.find("// ") < line.find("INJECTED")) << path << ": " << line;
      EXPECT_EQ(line.find("*/"), std::string::npos) << path << ": " << line;
      EXPECT_EQ(line.find("?" "?/"), std::string::npos) << path << ": " << line;
      EXPECT_NE(line.back(), '\\') << path << ": " << line;
      EXPECT_NE(code.rfind("#", 0), 0u) << path << ": " << line;
    }
  }
  EXPECT_GE(lines_with_marker, 5);
}

TEST(Injection, CommentTextIsOneSafeLine) {
  EXPECT_EQ(emit::comment_text("a\nb\r\tc"), "a b  c");
  EXPECT_EQ(emit::comment_text("x */ y /* z"), "x * / y / * z");
  EXPECT_EQ(emit::comment_text("what?" "?/"), "what? ?/");
  EXPECT_EQ(emit::comment_text("ends with \\\\ \n"), "ends with");
  EXPECT_EQ(emit::comment_text("plain: a < b && c"), "plain: a < b && c");
}

TEST(Injection, StringLiteralsEscapeEveryControlCharacter) {
  EXPECT_EQ(emit::c_string("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
  EXPECT_EQ(emit::c_string("cr\rnul"), "\"cr\\015nul\"");
  EXPECT_EQ(emit::c_string(std::string("x\0" "1", 3)), "\"x\\0001\"");
  EXPECT_EQ(emit::c_string("what?" "?/"), "\"what?\\?/\"");
}

}  // namespace
