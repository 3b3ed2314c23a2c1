#pragma once
// Identifier rules shared by every target. A spec name becomes an MSL parameter, a C++ variable
// and an Objective-C selector piece, so it must be a valid, unreserved identifier in all three.
#include <string>
#include <string_view>

namespace mtlgen::spec {

// Which language reserves `name`, or nullptr when it is free. Covers MSL (C++14 keywords, address
// spaces, attribute-like keywords, built-in type names, metal_stdlib functions kernels call
// unqualified), C++20 keywords, Objective-C keywords, and mtlgen's own helpers and builtins.
const char* reserved_by(std::string_view name);

}  // namespace mtlgen::spec
