#pragma once
// Spelling values and expressions as C++ source for the host-side emitters.
#include <set>
#include <string>
#include <vector>

#include "ir/kernel.h"

namespace mtlgen::emit {

// "…" with backslashes, quotes and control characters escaped.
std::string c_string(const std::string& text);

// Spec text (a summary, a doc, a path) made safe to paste into a `//` or `/* */` comment of C++,
// Objective-C++ or MSL: one line (control characters become spaces), no `*/` or `/*`, no `??`
// (a trigraph can end a line with `\`), no trailing backslash (it would splice the next line
// into the comment). A spec is data; none of it may become code.
std::string comment_text(const std::string& text);

// A literal of `type` for `value`, e.g. 1e-06f, 0.0f, 7u, -3, std::numeric_limits<float>::infinity().
std::string cpp_literal(ir::ScalarType type, double value);

// An initializer of `type` for `value` in host code: like cpp_literal, but `true`/`false` for bool and
// an explicit conversion for half and bfloat (`mtlgen::half(0.5f)`).
std::string cpp_initializer(ir::ScalarType type, double value);

// An expression as host C++ over int64_t locals named like the dims and tunables.
std::string host_expr(const expr::Expr& e);

// `const int64_t n = dims.n;` / `const int64_t TG = tuning.TG;` for the symbols `exprs` use.
std::vector<std::string> host_locals(const ir::Kernel& k, const std::vector<const expr::Expr*>& exprs);

// `types.T == mtlgen::DType::f32 && tuning.TG == 32`, or "true" for the only variant.
std::string variant_condition(const ir::Kernel& k, const ir::Variant& v);

// The C++ spelling of an element type in host code; type parameters keep their names.
std::string host_type(const ir::TypeRef& t);

// `cpp` without the `[[maybe_unused]]` of each function parameter that its body uses. Templates
// mark every parameter that some kernel's function may leave unused; this keeps the mark only
// where this kernel's leaves it unused. Declarations without a body and variables are left alone.
std::string drop_needless_maybe_unused(const std::string& cpp);

}  // namespace mtlgen::emit
