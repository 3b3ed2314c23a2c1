#pragma once
// Metal conformance checks: C++ that g++ (and clang) accept but Apple's Metal compiler rejects.
// Each finding is a located msl_conformance error whose message cites the section of Apple's
// *Metal Shading Language Specification* the rule comes from, e.g.
//   k.metal:12:5: error: lambdas are not supported in Metal (MSL specification 1.4.4 "C++17 Features Not Supported")
// Rules are checked against the specification, not guessed; docs/import.md lists them.
#include <clang-c/Index.h>

#include <string>

#include "support/diagnostics.h"

namespace mtlgen::msl {

struct ConformanceOptions {
  std::string main_file;            // only declarations spelled in this file (or its local
                                    // includes, not the shim) are checked
  std::string msl_version = "3.1";  // the version the file declares / the spec targets
};

// Walks `tu` (parsed by msl::parse, address-space words as empty macros, so they are read from
// tokens) and reports every violation to `diags`.
void check_conformance(CXTranslationUnit tu, const ConformanceOptions& options, support::Diagnostics& diags);

}  // namespace mtlgen::msl
