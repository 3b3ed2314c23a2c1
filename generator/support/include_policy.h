#pragma once
// What spec code may make the compiler read. Bodies, references and hand-written kernel files
// are compiled on the user's machine, whose compiler would read any file they name and quote it
// in its errors (`#include </etc/passwd>`), or wait on it (`</dev/stdin>`). So spec code may
// include only by a literal, relative name without `..` (the shim's headers, the standard
// library's, files beside the spec); a computed include, an absolute or escaping name, a file
// named by `#line`, and `#pragma GCC dependency` are refused before anything is compiled.
// The spec front end (check) and the MSL front end apply it before libclang reads anything;
// verify again before g++ does.
#include <optional>
#include <string>

namespace mtlgen::support {

struct IncludeViolation {
  int line = 0;          // in the file
  int column = 0;
  std::string directive; // as written, trimmed, at most 120 characters
  std::string why;
};

inline constexpr const char* kIncludePolicyHint =
    "include the simulator's headers (<metal_stdlib>), the standard library's, or files beside the spec by a "
    "relative name; spec code never reads other files of the machine that checks it";

// The first refused directive of `text`, which starts at `first_line`:`first_column` of its file
// (each of its lines indented as its first); nothing when there is none.
std::optional<IncludeViolation> first_include_violation(const std::string& text, int first_line, int first_column = 1);

// The same as a located error, "file:line:col: error: ...\nhint: ..."; "" when there is none.
std::string include_violation(const std::string& text, const std::string& file, int first_line, int first_column = 1);

}  // namespace mtlgen::support
