// Clang's errors, located where the user can act on them: errors inside a macro expansion are
// reported at the invocation, errors inside the shim at the user's line that instantiated it.
#include <fmt/format.h>

#include <algorithm>

#include "msl/msl_internal.h"

namespace mtlgen::msl {

namespace {

// The innermost user-file location among the notes ("in instantiation of ... requested here").
FilePos user_position_from_notes(Context& ctx, CXDiagnostic d) {
  CXDiagnosticSet notes = clang_getChildDiagnostics(d);
  unsigned n = notes ? clang_getNumDiagnosticsInSet(notes) : 0;
  for (unsigned i = 0; i < n; ++i) {
    CXDiagnostic note = clang_getDiagnosticInSet(notes, i);
    FilePos p = ctx.pos(clang_getDiagnosticLocation(note));
    bool include_note = str(clang_getDiagnosticSpelling(note)).rfind("in file included from", 0) == 0;
    clang_disposeDiagnostic(note);
    if (p.file && !include_note) return p;
  }
  return {};
}

std::string hint_for(const std::string& message) {
  if (message.find("file not found") != std::string::npos)
    return "local headers are looked up next to the file and in the include directories given; "
           "of Apple's headers only <metal_stdlib> is available";
  return "mtlgen parses Metal as C++20 against its <metal_stdlib> shim (with libclang); "
         "this is where that parse failed";
}

}  // namespace

void report_clang_diagnostics(Context& ctx, support::Diagnostics& diags, const std::vector<SourceRange>& ignored) {
  unsigned n = clang_getNumDiagnostics(ctx.tu());
  for (unsigned i = 0; i < n; ++i) {
    CXDiagnostic d = clang_getDiagnostic(ctx.tu(), i);
    if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) {
      std::string message = str(clang_getDiagnosticSpelling(d));
      FilePos at = ctx.pos(clang_getDiagnosticLocation(d));
      const bool inside_ignored = at.file && std::any_of(ignored.begin(), ignored.end(), [&](const SourceRange& r) {
        return r.file == at.file->path && r.begin <= at.offset && at.offset < r.end;
      });
      if (inside_ignored) {
        clang_disposeDiagnostic(d);
        continue;
      }
      if (!at.file) {
        FilePos user = user_position_from_notes(ctx, d);
        if (at.loc.line > 0) message += fmt::format(" (in {}:{})", at.loc.file, at.loc.line);
        at = user;
      }
      if (!at.file) at.loc = {ctx.main_display(), 1, 1};
      std::string hint = hint_for(message);
      diags.error(support::ErrorKind::msl_syntax, at.loc, std::move(message), std::move(hint));
    }
    clang_disposeDiagnostic(d);
  }
}

}  // namespace mtlgen::msl
