#include "msl/cpp_check.h"

#include <clang-c/Index.h>
#include <fmt/format.h>

#include <set>
#include <string>

#include "msl/msl_internal.h"

namespace mtlgen::msl {

namespace {

support::SourceLoc location_of(CXSourceLocation at) {
  CXFile file = nullptr;
  unsigned line = 0, column = 0;
  clang_getExpansionLocation(at, &file, &line, &column, nullptr);
  return {file ? str(clang_getFileName(file)) : std::string(), static_cast<int>(line), static_cast<int>(column)};
}

// The standard headers the files include (`#include <cmath>` at a line's start), precompiled
// together: most of a reference's parse. Only those: a header the code forgot stays an error.
std::string standard_includes(const std::vector<CppFile>& files) {
  std::set<std::string> names;
  for (const auto& f : files) {
    for (size_t at = f.text.find("#include <"); at != std::string::npos; at = f.text.find("#include <", at + 1)) {
      const size_t end = f.text.find('>', at);
      const bool line_start = at == 0 || f.text[at - 1] == '\n';
      const std::string name = end == std::string::npos ? "" : f.text.substr(at + 10, end - at - 10);
      if (line_start && !name.empty() && name.find_first_of("./\n") == std::string::npos) names.insert(name);
    }
  }
  std::string header;
  for (const auto& n : names) header += "#include <" + n + ">\n";
  return header;
}

}  // namespace

void check_cpp(const std::vector<CppFile>& files, size_t main, support::Diagnostics& diags) {
  std::vector<CXUnsavedFile> unsaved;
  for (const auto& f : files) unsaved.push_back({f.path.c_str(), f.text.c_str(), static_cast<unsigned long>(f.text.size())});
  std::vector<std::string> args = {"-std=c++20", "-fsyntax-only", "-ferror-limit=20", "-Wno-attributes"};
  const std::string pch = precompiled_header(standard_includes(files), args, {});
  args.insert(args.begin(), {"-x", "c++"});
  if (!pch.empty()) args.insert(args.end(), {"-include-pch", pch});
  ClangSession session;
  CXErrorCode status = session.parse(files[main].path, args, unsaved, CXTranslationUnit_KeepGoing, false);
  if (status != CXError_Success || !session.tu) {
    diags.error(support::ErrorKind::msl_syntax, {files[main].path, 1, 1},
                fmt::format("libclang could not parse the C++ (error {})", static_cast<int>(status)),
                "libclang failed before reading the code (not a mistake in it); run `mtlgen verify`, whose g++ "
                "compile reports the reference's errors");
    return;
  }
  for (unsigned i = 0, n = clang_getNumDiagnostics(session.tu); i < n; ++i) {
    CXDiagnostic d = clang_getDiagnostic(session.tu, i);
    if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) {
      diags.error(support::ErrorKind::msl_syntax, location_of(clang_getDiagnosticLocation(d)),
                  str(clang_getDiagnosticSpelling(d)),
                  "the reference is C++20 with the standard library; docs/spec-format.md#reference lists the names "
                  "it sees");
    }
    clang_disposeDiagnostic(d);
  }
}

}  // namespace mtlgen::msl
