#pragma once
// The C++ side of the front end: a spec's reference is C++ that `verify` compiles with g++. To
// report its errors in `check`, once, this parses a translation unit held in memory with libclang
// (-std=c++20, the host's standard library) and returns clang's errors at the files' own lines.
#include <string>
#include <vector>

#include "support/diagnostics.h"

namespace mtlgen::msl {

struct CppFile {
  std::string path;  // absolute, as #include resolves it (e.g. /.mtlgen-reference/k/k.cpp)
  std::string text;
};

// Parses `files[main]`; each error goes to `diags` as msl-syntax at its file, line and column.
void check_cpp(const std::vector<CppFile>& files, size_t main, support::Diagnostics& diags);

}  // namespace mtlgen::msl
