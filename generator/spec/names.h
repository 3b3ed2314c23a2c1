#pragma once
// Reserved words per target. A spec name becomes an MSL parameter or local, a C++ variable or
// field and, through the name assigner (name_assigner.h), part of Objective-C selectors and
// class names, so it must be a valid, unreserved identifier in all of them.
#include <string_view>

namespace mtlgen::spec {

// Which language reserves `name` as a spec name, or nullptr when it is free. Covers MSL (keywords,
// address spaces, built-in type, vector and matrix names),
// C++20 keywords and the identifiers C++ reserves to the implementation (containing `__`, or `_`
// and an uppercase letter), macros of the headers generated code includes, the names generated
// C++ declares around spec names (<kernel>_types.h, the reference), Objective-C keywords, and
// mtlgen's own helpers and builtins.
const char* reserved_by(std::string_view name);

// Which language reserves `name` for a name in the kernel's scope (a dim, tunable, buffer, scalar,
// function constant, threadgroup array or type parameter), beyond reserved_by: the metal_stdlib
// functions a kernel calls unqualified, which a local or parameter of that name would hide.
const char* reserved_in_kernel(std::string_view name);

// Why the Objective-C++ glue cannot use `name` for a name it derives (a selector piece and
// parameter, a property, a local), or nullptr when it can: Objective-C and C++ keywords and the
// names the glue itself declares in the scopes where derived names live.
const char* reserved_in_glue(std::string_view name);

}  // namespace mtlgen::spec
