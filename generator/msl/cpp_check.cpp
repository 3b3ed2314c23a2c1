#include "msl/cpp_check.h"

#include <clang-c/Index.h>
#include <fmt/format.h>

#include "msl/msl_internal.h"

namespace mtlgen::msl {

namespace {

support::SourceLoc location_of(CXSourceLocation at) {
  CXFile file = nullptr;
  unsigned line = 0, column = 0;
  clang_getExpansionLocation(at, &file, &line, &column, nullptr);
  return {file ? str(clang_getFileName(file)) : std::string(), static_cast<int>(line), static_cast<int>(column)};
}

}  // namespace

void check_cpp(const std::vector<CppFile>& files, size_t main, support::Diagnostics& diags) {
  std::vector<CXUnsavedFile> unsaved;
  for (const auto& f : files) unsaved.push_back({f.path.c_str(), f.text.c_str(), static_cast<unsigned long>(f.text.size())});
  const char* args[] = {"-x", "c++", "-std=c++20", "-fsyntax-only", "-ferror-limit=20", "-Wno-attributes"};
  CXIndex index = clang_createIndex(0, 0);
  CXTranslationUnit tu = nullptr;
  CXErrorCode status = clang_parseTranslationUnit2(index, files[main].path.c_str(), args, std::size(args), unsaved.data(),
                                                   static_cast<unsigned>(unsaved.size()), CXTranslationUnit_KeepGoing, &tu);
  if (status != CXError_Success || !tu) {
    diags.error(support::ErrorKind::msl_syntax, {files[main].path, 1, 1},
                fmt::format("libclang could not parse the C++ (error {})", static_cast<int>(status)),
                "libclang failed before reading the code (not a mistake in it); run `mtlgen verify`, whose g++ "
                "compile reports the reference's errors");
  } else {
    for (unsigned i = 0, n = clang_getNumDiagnostics(tu); i < n; ++i) {
      CXDiagnostic d = clang_getDiagnostic(tu, i);
      if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) {
        diags.error(support::ErrorKind::msl_syntax, location_of(clang_getDiagnosticLocation(d)),
                    str(clang_getDiagnosticSpelling(d)),
                    "the reference is C++20 with the standard library; docs/spec-format.md#reference lists the names "
                    "it sees");
      }
      clang_disposeDiagnostic(d);
    }
    clang_disposeTranslationUnit(tu);
  }
  clang_disposeIndex(index);
}

}  // namespace mtlgen::msl
