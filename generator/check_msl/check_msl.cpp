#include "check_msl/check_msl.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>
#include <utility>
#include <vector>

#include "emit_common/emitter.h"
#include "emit_msl/msl_emitter.h"
#include "emit_reference/reference_emitter.h"
#include "msl/cpp_check.h"
#include "msl/msl_unit.h"
#include "support/include_policy.h"

namespace mtlgen::check_msl {
namespace {

// A spec code block inside an emitted file: it starts on the line after its marker comment
// (`// body: spec.yaml:12`), indented by two spaces.
struct Embedded {
  const ir::CodeBlock& block;
  std::string file;         // the emitted file's path as the parser names it
  const std::string& text;  // the emitted file
  const char* what;         // "body" or "reference"
  int first = 0;            // 1-based line of the block's first line in `text`; 0: marker not found
  int count = 0;

  Embedded(const ir::CodeBlock& b, std::string f, const std::string& t, const char* w, const std::string& marker)
      : block(b), file(std::move(f)), text(t), what(w) {
    if (int line = emit::marker_line(text, marker)) first = line + 1;
    count = static_cast<int>(std::count(b.text.begin(), b.text.end(), '\n')) +
            (b.text.empty() || b.text.back() == '\n' ? 0 : 1);
  }

  bool contains(const support::SourceLoc& loc) const {
    return first > 0 && loc.file == file && loc.line >= first && loc.line < first + count;
  }
};

std::string line_of(const std::string& text, int line) {
  std::istringstream in(text);
  std::string l;
  for (int i = 0; i < line && std::getline(in, l); ++i) {
  }
  return l;
}

// The block scalar's own indentation is in loc.column; the emitters indent by two spaces.
support::Diagnostic at_spec_line(const support::Diagnostic& d, const Embedded& e) {
  support::Diagnostic out = d;
  out.loc = e.block.loc;
  if (e.contains(d.loc)) {
    out.loc.line = e.block.loc.line + (d.loc.line - e.first);
    out.loc.column = std::max(1, d.loc.column - 2) + std::max(0, e.block.loc.column - 1);
    return out;
  }
  // In the code around the block (a helper it misuses, a header): name the generated line and
  // report at the block's first line.
  std::string where = d.loc.file == e.file ? line_of(e.text, d.loc.line) : d.loc.file;
  out.message = fmt::format("{} (in the code mtlgen wraps around the {}, at `{}`)", d.message, e.what, where);
  return out;
}

// Reports `parsed`'s errors at spec lines: those inside the block each, one from around it.
bool report_at_spec(const support::Diagnostics& parsed, const Embedded& e, support::Diagnostics& diags) {
  bool ok = true;
  bool outside_reported = false;
  for (const auto& d : parsed.all()) {
    if (d.severity != support::Severity::error) continue;
    if (!e.contains(d.loc) && std::exchange(outside_reported, true)) continue;
    support::Diagnostic mapped = at_spec_line(d, e);
    diags.error(mapped.kind, mapped.loc, mapped.message, mapped.hint);
    ok = false;
  }
  return ok;
}

// libclang would read what the block includes, wait on `/dev/stdin` and quote `/etc/passwd`:
// a directive the include policy refuses is reported before anything is parsed. (msl::parse does
// this for bodies; the reference's parse also reads generated headers that include `../support`.)
bool includes_allowed(const ir::CodeBlock& block, support::Diagnostics& diags) {
  auto v = support::first_include_violation(block.text, block.loc.line, std::max(1, block.loc.column));
  if (!v) return true;
  support::SourceLoc loc = block.loc;
  loc.line = v->line;
  loc.column = v->column;
  diags.error(support::ErrorKind::msl_syntax, loc, fmt::format("`{}`: {}", v->directive, v->why),
              support::kIncludePolicyHint);
  return false;
}

// Brackets a block leaves open or closes too often would be reported by the parse at the
// generated code after it; say it where the user wrote it. Comments and literals skipped.
bool brackets_balanced(const ir::CodeBlock& block, const char* what, support::Diagnostics& diags) {
  struct Open {
    char c;
    int line, column;
  };
  std::vector<Open> open;
  const std::string& t = block.text;
  int line = 0, column = 0;
  auto at = [&](int l, int c) {
    support::SourceLoc loc = block.loc;
    loc.line += l;
    loc.column = c + std::max(1, block.loc.column);
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
                    open.empty() ? fmt::format("remove it, or open its bracket earlier in the {}", what)
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
              fmt::format("close it with `{}` before the {} ends", want, what));
  return false;
}

}  // namespace

bool check_emitted_msl(const ir::Kernel& kernel, support::Diagnostics& diags) {
  if (kernel.is_source()) return true;
  if (!brackets_balanced(kernel.body, "body", diags)) return false;  // msl::parse applies the include policy
  msl::ParseOptions options;
  options.file = kernel.name + ".metal";
  options.text = emit::msl_source(kernel);
  options.msl_version = kernel.msl_version;
  support::Diagnostics parsed;
  msl::parse(options, parsed);
  return report_at_spec(parsed, {kernel.body, options.file.string(), *options.text, "body", emit::kBodyMarker}, diags);
}

bool check_emitted_reference(const ir::Kernel& kernel, support::Diagnostics& diags) {
  if (!includes_allowed(kernel.reference, diags) || !brackets_balanced(kernel.reference, "reference", diags)) {
    return false;
  }
  support::OutputSet out;
  emit::emit_types(kernel, out);
  emit::emit_reference(kernel, out);
  emit::emit_host_support({kernel}, out);
  const std::string root = "/.mtlgen-reference/";
  const std::string main = kernel.name + "/" + kernel.name + "_reference.cpp";
  std::vector<msl::CppFile> files;
  size_t main_index = 0;
  for (const auto& [path, text] : out.files()) {
    if (path == main) main_index = files.size();
    files.push_back({root + path, text});
    // clang looks `#include "../support/x.h"` up through the kernel's (virtual) directory.
    if (path.rfind("support/", 0) == 0) files.push_back({root + kernel.name + "/../" + path, text});
  }
  support::Diagnostics parsed;
  msl::check_cpp(files, main_index, parsed);
  Embedded e{kernel.reference, root + main, files[main_index].text, "reference", emit::kReferenceMarker};
  return report_at_spec(parsed, e, diags);
}

}  // namespace mtlgen::check_msl
