#pragma once
// What spec code may make the compiler read. Bodies, references and hand-written kernel files
// are compiled on the user's machine, whose compiler would read any file they name and quote it
// in its errors (`#include </etc/passwd>`), or wait on it (`</dev/stdin>`). So spec code may
// include only by a literal, relative name without `..` (the shim's headers, the standard
// library's, files beside the spec); a computed include, an absolute or escaping name, a file
// named by `#line`, and `#pragma GCC dependency` are refused before anything is compiled.
#include <string>

namespace mtlgen::verify {

// The first refused directive of `text` (which starts at `first_line`:`first_column` of `file`,
// each of its lines indented as its first) as a located error, "file:line:col: error: ...\nhint:
// ..."; "" when there is none.
std::string include_violation(const std::string& text, const std::string& file, int first_line, int first_column = 1);

}  // namespace mtlgen::verify
