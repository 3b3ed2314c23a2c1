#include "check_msl/check_msl.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>
#include <utility>
#include <vector>

#include "emit_msl/msl_emitter.h"
#include "msl/msl_unit.h"

namespace mtlgen::check_msl {
namespace {

// Emitted lines around the body, from the marker comment the MSL emitter writes before it.
struct BodySpan {
  int first = 0;  // 1-based line of the body's first line in the emitted text; 0: not found
  int count = 0;
};

BodySpan body_span(const std::string& msl, const ir::Kernel& k) {
  BodySpan span;
  size_t at = msl.find(emit::kBodyMarker);
  if (at == std::string::npos) return span;
  span.first = static_cast<int>(std::count(msl.begin(), msl.begin() + static_cast<long>(at), '\n')) + 2;
  span.count = static_cast<int>(std::count(k.body.text.begin(), k.body.text.end(), '\n')) +
               (k.body.text.empty() || k.body.text.back() == '\n' ? 0 : 1);
  return span;
}

std::string line_of(const std::string& text, int line) {
  std::istringstream in(text);
  std::string l;
  for (int i = 0; i < line && std::getline(in, l); ++i) {
  }
  return l;
}

// The body is emitted indented by two spaces; the block scalar's own indentation is in loc.column.
support::Diagnostic at_spec_line(const support::Diagnostic& d, const ir::Kernel& k, const BodySpan& span,
                                 const std::string& msl) {
  support::Diagnostic out = d;
  if (span.first > 0 && d.loc.line >= span.first && d.loc.line < span.first + span.count) {
    out.loc = k.body.loc;
    out.loc.line = k.body.loc.line + (d.loc.line - span.first);
    out.loc.column = std::max(1, d.loc.column - 2) + std::max(0, k.body.loc.column - 1);
    return out;
  }
  // In the code around the body (a brace the body left open, a helper it misuses): name the
  // generated line, report at the body's first line.
  out.loc = k.body.loc;
  out.message = fmt::format("{} (in the code mtlgen wraps around the body, at `{}`)", d.message,
                            line_of(msl, d.loc.line));
  return out;
}

// Brackets the body leaves open or closes too often would be reported by the parse at the
// generated code after the body; say it where the user wrote it. Comments and literals skipped.
bool brackets_balanced(const ir::Kernel& k, support::Diagnostics& diags) {
  struct Open {
    char c;
    int line, column;
  };
  std::vector<Open> open;
  const std::string& t = k.body.text;
  int line = 0, column = 0;
  auto at = [&](int l, int c) {
    support::SourceLoc loc = k.body.loc;
    loc.line += l;
    loc.column = c + std::max(1, k.body.loc.column);
    return loc;
  };
  for (size_t i = 0; i < t.size(); ++i, ++column) {
    char c = t[i];
    if (c == '\n') {
      ++line;
      column = -1;
    } else if (t.compare(i, 2, "//") == 0) {
      while (i + 1 < t.size() && t[i + 1] != '\n') ++i;
    } else if (t.compare(i, 2, "/*") == 0) {
      for (i += 2; i + 1 < t.size() && t.compare(i, 2, "*/") != 0; ++i, ++column) {
        if (t[i] == '\n') ++line, column = -1;
      }
      ++i;
    } else if (c == '"' || c == '\'') {
      for (++i, ++column; i < t.size() && t[i] != c && t[i] != '\n'; ++i, ++column) {
        if (t[i] == '\\') ++i, ++column;
      }
    } else if (c == '(' || c == '[' || c == '{') {
      open.push_back({c, line, column});
    } else if (c == ')' || c == ']' || c == '}') {
      char want = c == ')' ? '(' : c == ']' ? '[' : '{';
      if (open.empty() || open.back().c != want) {
        diags.error(support::ErrorKind::msl_syntax, at(line, column), fmt::format("this `{}` closes nothing", c),
                    open.empty() ? "remove it, or open its bracket earlier in the body"
                                 : fmt::format("the innermost open bracket is `{}`", open.back().c));
        return false;
      }
      open.pop_back();
    }
  }
  if (open.empty()) return true;
  const Open& o = open.back();
  char want = o.c == '(' ? ')' : o.c == '[' ? ']' : '}';
  diags.error(support::ErrorKind::msl_syntax, at(o.line, o.column), fmt::format("this `{}` is never closed", o.c),
              fmt::format("close it with `{}` before the body ends", want));
  return false;
}

}  // namespace

bool check_emitted_msl(const ir::Kernel& kernel, support::Diagnostics& diags) {
  if (kernel.is_source()) return true;
  if (!brackets_balanced(kernel, diags)) return false;
  std::string msl = emit::msl_source(kernel);
  msl::ParseOptions options;
  options.file = kernel.name + ".metal";
  options.text = msl;
  options.msl_version = kernel.msl_version;
  support::Diagnostics parsed;
  msl::parse(options, parsed);
  BodySpan span = body_span(msl, kernel);
  bool ok = true;
  bool outside_reported = false;  // one error from the code around the body says enough
  for (const auto& d : parsed.all()) {
    if (d.severity != support::Severity::error) continue;
    bool inside = span.first > 0 && d.loc.line >= span.first && d.loc.line < span.first + span.count;
    if (!inside && std::exchange(outside_reported, true)) continue;
    support::Diagnostic mapped = at_spec_line(d, kernel, span, msl);
    diags.error(mapped.kind, mapped.loc, mapped.message, mapped.hint);
    ok = false;
  }
  return ok;
}

}  // namespace mtlgen::check_msl
