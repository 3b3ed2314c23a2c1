#include "check_msl/check_msl.h"

#include <fmt/format.h>

#include <clang-c/Index.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "emit_common/emitter.h"
#include "emit_msl/msl_emitter.h"
#include "emit_reference/reference_emitter.h"
#include "msl/cpp_check.h"
#include "msl/msl_unit.h"
#include "support/hash.h"
#include "support/include_policy.h"
#include "support/output_set.h"

namespace mtlgen::check_msl {
namespace {

// The spec code blocks inside one emitted file (each on the lines after its marker comment,
// `// body: spec.yaml:12`); the last is the one the file is built around (body, reference).
struct Embedded {
  std::string file;         // the emitted file's path as the parser names it
  const std::string& text;  // the emitted file
  std::vector<emit::EmbeddedBlock> blocks;

  const emit::EmbeddedBlock& main() const { return blocks.back(); }

  // The spec location of an emitted location inside one of the blocks.
  std::optional<support::SourceLoc> spec_loc(const support::SourceLoc& loc) const {
    if (loc.file != file) return std::nullopt;
    for (const auto& b : blocks) {
      auto at = emit::spec_location(text, {b}, loc.line);
      if (!at) continue;
      at->column = std::max(1, loc.column - b.indent) + std::max(0, b.block->loc.column - 1);
      return at;
    }
    return std::nullopt;
  }
};

std::string line_of(const std::string& text, int line) {
  std::istringstream in(text);
  std::string l;
  for (int i = 0; i < line && std::getline(in, l); ++i) {
  }
  return l;
}

support::Diagnostic at_spec_line(const support::Diagnostic& d, const Embedded& e) {
  support::Diagnostic out = d;
  if (auto at = e.spec_loc(d.loc)) {
    out.loc = *at;
    return out;
  }
  // In the code around the blocks (a helper they misuse, a header): name the generated line and
  // report at the main block's first line.
  out.loc = e.main().block->loc;
  std::string where = d.loc.file == e.file ? line_of(e.text, d.loc.line) : d.loc.file;
  out.message = fmt::format("{} (in the code mtlgen wraps around the {}, at `{}`)", d.message, e.main().what, where);
  return out;
}

// Reports `parsed`'s errors at spec lines: those inside the blocks each, one from around them.
bool report_at_spec(const support::Diagnostics& parsed, const Embedded& e, support::Diagnostics& diags) {
  bool ok = true;
  bool outside_reported = false;
  for (const auto& d : parsed.all()) {
    if (d.severity != support::Severity::error) continue;
    if (!e.spec_loc(d.loc) && std::exchange(outside_reported, true)) continue;
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

// Brackets and includes of every block, each where the user wrote it.
bool blocks_well_formed(const std::vector<emit::EmbeddedBlock>& blocks, support::Diagnostics& diags) {
  bool ok = true;
  for (const auto& b : blocks) {
    if (b.block->text.empty()) continue;
    ok = includes_allowed(*b.block, diags) && brackets_balanced(*b.block, b.what, diags) && ok;
  }
  return ok;
}

}  // namespace

bool check_emitted_msl(const ir::Kernel& kernel, support::Diagnostics& diags) {
  if (kernel.is_source()) return true;
  auto blocks = emit::msl_blocks(kernel);
  if (!blocks_well_formed(blocks, diags)) return false;
  msl::ParseOptions options;
  options.file = kernel.name + ".metal";
  options.text = emit::msl_source(kernel);
  options.msl_version = kernel.msl_version;
  support::Diagnostics parsed;
  msl::parse(options, parsed);
  return report_at_spec(parsed, {options.file.string(), *options.text, std::move(blocks)}, diags);
}

bool check_emitted_reference(const ir::Kernel& kernel, support::Diagnostics& diags) {
  auto blocks = emit::reference_blocks(kernel);
  if (!blocks_well_formed(blocks, diags)) return false;
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
  return report_at_spec(parsed, {root + main, files[main_index].text, std::move(blocks)}, diags);
}

}  // namespace mtlgen::check_msl

namespace mtlgen::check_msl {

namespace fs = std::filesystem;


namespace {

// The text libclang would read for `kernel`, with what else decides the verdict.
std::string check_key(const ir::Kernel& kernel, const PassedChecks& passed) {
  CXString version = clang_getClangVersion();
  std::string all = std::string(clang_getCString(version)) + "\n" + passed.salt + "\n" + kernel.spec_path + "\n";
  clang_disposeString(version);
  if (!kernel.is_family() && !kernel.is_source()) all += emit::msl_source(kernel);
  support::OutputSet out;
  emit::emit_types(kernel, out);
  emit::emit_reference(kernel, out);
  emit::emit_host_support({kernel}, out);
  for (const auto& [path, text] : out.files()) all += path + "\n" + support::hash_hex(text) + "\n";
  return support::wide_hash_hex(all);
}

bool passed_before(const fs::path& marker) {
  std::error_code ec;
  return !marker.empty() && fs::exists(marker, ec);
}

void remember_pass(const fs::path& marker) {
  try {
    support::write_file_atomically(marker, "passed\n");
  } catch (const std::exception&) {
    // An unwritable cache costs the next run time, nothing else.
  }
}

bool emitted_code_compiles(const ir::Kernel& kernel, support::Diagnostics& diags) {
  if (kernel.is_family()) return check_emitted_reference(kernel, diags);  // its kernels are checked on their own
  bool ok = check_emitted_msl(kernel, diags);  // both, to report both
  return check_emitted_reference(kernel, diags) && ok;
}

}  // namespace

std::vector<ir::Kernel> kernels_that_compile(std::vector<ir::Kernel> kernels, support::Diagnostics& diags,
                                             const PassedChecks& passed) {
  std::set<std::string> failed;
  for (const auto& k : kernels) {
    fs::path marker = passed.dir.empty() ? fs::path() : passed.dir / "checked" / check_key(k, passed);
    if (passed_before(marker)) continue;
    if (!emitted_code_compiles(k, diags)) failed.insert(k.name);
    else if (!marker.empty()) remember_pass(marker);
  }
  // A family stands or falls with its kernels, and they with it: it is one unit of the library.
  for (const auto& k : kernels) {
    if (!k.is_family()) continue;
    bool any = failed.count(k.name) > 0;
    for (const auto& m : k.family->kernels) any = any || failed.count(m.name) > 0;
    if (!any) continue;
    failed.insert(k.name);
    for (const auto& m : k.family->kernels) failed.insert(m.name);
  }
  std::erase_if(kernels, [&](const ir::Kernel& k) { return failed.count(k.name) > 0; });
  return kernels;
}

}  // namespace mtlgen::check_msl
