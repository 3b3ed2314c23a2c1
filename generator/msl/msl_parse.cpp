// parse(): reads the source, respells what clang would drop (msl_prepass.cpp), parses it with
// libclang against the embedded shim, reports clang's errors at the user's lines, describes the
// entry points and plans the simulator's rewrite.
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "msl/conformance.h"
#include "msl/msl_internal.h"
#include "support/include_policy.h"
#include "support/embedded_files.h"

namespace mtlgen::support {
const std::vector<EmbeddedFile>& mtlgen_msl_files();  // the shim, embedded by CMake
}

namespace mtlgen::msl {

namespace {

using support::Diagnostics;
using support::ErrorKind;

std::optional<std::string> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// "3.1" -> 310, as __METAL_VERSION__ spells MSL versions.
std::optional<int> metal_version_number(const std::string& version) {
  std::smatch m;
  static const std::regex kVersion(R"((\d)\.(\d))");
  if (!std::regex_match(version, m, kVersion)) return std::nullopt;
  return std::stoi(m[1]) * 100 + std::stoi(m[2]) * 10;
}

// Files clang reads from memory: the pre-passed user files and the shim.
struct MemoryFiles {
  std::vector<std::pair<std::string, std::string>> files;  // name, contents
  std::vector<CXUnsavedFile> unsaved() const {
    std::vector<CXUnsavedFile> out;
    for (const auto& [name, text] : files) out.push_back({name.c_str(), text.data(), text.size()});
    return out;
  }
};

// Local headers reachable through `#include "..."` (and <...> found in include_dirs), by the
// name clang will give them, with their original text; they are pre-passed like the main file.
// Each gets the path under which a copy of the tree finds it (LocalHeader::key): as spelled when
// an include directory held it, else beside its includer's key.
void collect_local_headers(const std::string& file, const std::string& own_key, const std::string& text,
                           const std::vector<std::filesystem::path>& dirs, std::map<std::string, LocalHeader>& found) {
  static const std::regex kInclude(R"([ \t]*#[ \t]*include[ \t]*(["<])([^">\n]+)[">].*)");
  if (found.size() > 1024) return;
  std::filesystem::path own_dir = std::filesystem::path(file).parent_path();
  if (own_dir.empty()) own_dir = ".";  // clang names `sub/x.h` beside `k.metal` ./sub/x.h
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, kInclude)) continue;
    std::vector<std::pair<std::filesystem::path, std::string>> where;  // directory, key there
    std::string spelled = m[2].str();
    if (m[1] == "\"") where.emplace_back(own_dir, (std::filesystem::path(own_key).parent_path() / spelled).generic_string());
    for (const auto& dir : dirs) where.emplace_back(dir, spelled);
    for (const auto& [dir, key] : where) {
      std::string candidate = (dir / spelled).string();  // as clang names it
      if (found.count(candidate)) break;
      std::error_code ec;
      if (!std::filesystem::is_regular_file(candidate, ec)) continue;
      auto header = read_file(candidate);
      if (!header) continue;
      std::string normal_key = std::filesystem::path(key).lexically_normal().generic_string();
      found[candidate] = {*header, normal_key};
      collect_local_headers(candidate, normal_key, *header, dirs, found);
      break;
    }
  }
}

std::vector<std::string> clang_arguments(const ParseOptions& options, const std::string& main_path,
                                         int metal_version) {
  std::vector<std::string> args = {
      "-x", "c++", "-std=c++20", "-fsyntax-only", "-Wno-attributes", "-Wno-unknown-attributes",
      options.errors_per_kernel ? "-ferror-limit=0" : "-ferror-limit=50", "-ftemplate-depth=400",
      // clang 14 has no _Float16 on x86; __fp16 is the same 2-byte type, and native-half-type
      // makes its arithmetic half as in Metal (`half x{a * b}`), not float (a narrowing error).
      "-D_Float16=__fp16", "-Xclang", "-fallow-half-arguments-and-returns", "-Xclang", "-fnative-half-type",
      fmt::format("-D__METAL_VERSION__={}", metal_version), "-D__METAL_MACOS__"};
  // MLX guards bfloat with __HAVE_BFLOAT__, which Apple's compiler defines from MSL 3.1.
  if (metal_version >= 310) args.push_back("-D__HAVE_BFLOAT__");
  for (auto& d : prepass_macro_definitions()) args.push_back(d);
  std::string own_dir = std::filesystem::path(main_path).parent_path().string();
  args.push_back("-I" + (own_dir.empty() ? std::string(".") : own_dir));
  for (const auto& dir : options.include_dirs) args.push_back("-I" + dir.string());
  args.push_back("-I" + std::string(kShimDir));
  args.push_back("-include");
  args.push_back(std::string(kShimDir) + "/" + std::string(kParsePrelude));
  return args;
}

}  // namespace

ClangSession::~ClangSession() {
  if (tu) clang_disposeTranslationUnit(tu);
  if (index_) clang_disposeIndex(index_);
}

CXErrorCode ClangSession::parse(const std::string& main_path, const std::vector<std::string>& args,
                                const std::vector<CXUnsavedFile>& files, unsigned flags, bool exclude_pch_declarations) {
  index_ = clang_createIndex(exclude_pch_declarations ? 1 : 0, 0);  // 0: no diagnostics on stderr
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::vector<CXUnsavedFile> unsaved = files;
  return clang_parseTranslationUnit2(index_, main_path.c_str(), argv.data(), static_cast<int>(argv.size()),
                                     unsaved.data(), static_cast<unsigned>(unsaved.size()), flags, &tu);
}

CXErrorCode ClangSession::reparse(std::vector<CXUnsavedFile> files) {
  return CXErrorCode(clang_reparseTranslationUnit(tu, static_cast<unsigned>(files.size()), files.data(),
                                                  clang_defaultReparseOptions(tu)));
}

bool ClangSession::has_errors() const {
  bool errors = tu == nullptr;
  for (unsigned i = 0, n = tu ? clang_getNumDiagnostics(tu) : 0; i < n; ++i) {
    CXDiagnostic d = clang_getDiagnostic(tu, i);
    errors = errors || clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error;
    clang_disposeDiagnostic(d);
  }
  return errors;
}

namespace {

// Address-space twins (msl_overloads.cpp) blanked where clang reads them, lines and columns
// kept. In a class template a member declared twice (`complex_t() thread` beside `complex_t()
// threadgroup`) costs the class its implicit members: `a[i] = b` finds no copy assignment.
void blank_ranges(MemoryFiles& memory, const std::vector<SourceRange>& ranges) {
  for (auto& [name, text] : memory.files)
    for (const SourceRange& r : ranges)
      if (r.file == name)
        for (unsigned i = r.begin; i < r.end && i < text.size(); ++i)
          if (text[i] != '\n') text[i] = ' ';
}

std::vector<SourceRange> address_space_twins_of(CXTranslationUnit tu, const std::string& path) {
  Context first(tu, path, path);
  return address_space_twins(first);
}

// The explicit instantiations that declare none of `needed` (ParseOptions::needed_entry_points),
// found by a parse that skips function bodies (ggml: 0.5 s against 3.6 s), blanked in `memory`;
// none where all of them declare at most `read_whole_up_to` host names. Returns their lines, for
// the table of those the simulator's copy leaves out.
std::vector<InstantiationLines> leave_out_instantiations(const std::string& path, const std::vector<std::string>& args,
                                                         MemoryFiles& memory, const std::set<std::string>& needed,
                                                         size_t read_whole_up_to) {
  ClangSession outline;
  const unsigned flags = CXTranslationUnit_KeepGoing | CXTranslationUnit_SkipFunctionBodies;
  if (outline.parse(path, args, memory.unsaved(), flags) != CXError_Success || !outline.tu) return {};
  Context ctx(outline.tu, path, path);
  const std::vector<InstantiationSite> sites = find_instantiation_sites(ctx);
  size_t host_names = 0;
  for (const InstantiationSite& s : sites) host_names += s.host_names.size();
  if (host_names <= read_whole_up_to) return {};
  std::vector<SourceRange> ranges;
  std::vector<InstantiationLines> lines;
  for (const InstantiationSite& s : sites) {
    const bool wanted = std::any_of(s.host_names.begin(), s.host_names.end(), [&](const std::string& n) { return needed.count(n) > 0; });
    if (wanted) continue;
    ranges.push_back({s.lines.file, s.begin, s.end});
    lines.push_back(s.lines);
  }
  blank_ranges(memory, ranges);
  return lines;
}

void forward(const Diagnostics& from, Diagnostics& to) {
  for (const auto& e : from.all()) {
    if (e.severity == support::Severity::error) to.error(e.kind, e.loc, e.message, e.hint);
    else to.warning(e.kind, e.loc, e.message, e.hint);
  }
}

// Metal compiles `threadgroup float x[32] = {0};` but does not run the initializer (threadgroup
// memory is not initialised from a declaration: Apple's own WGSL compiler stores its zeroes
// explicitly for that reason), so a kernel that reads before writing reads what memory holds.
void warn_threadgroup_initializers(const std::vector<ThreadgroupVariable>& variables, Diagnostics& diags) {
  for (const ThreadgroupVariable& v : variables)
    if (v.initializer)
      diags.warning(ErrorKind::threadgroup_memory, v.loc,
                    fmt::format("the initializer of threadgroup variable `{}` is not run: Metal does not initialise "
                                "threadgroup memory from a declaration, and the simulator does not either",
                                v.name),
                    "write the values from the threads, then threadgroup_barrier(mem_flags::mem_threadgroup), "
                    "before any thread reads them");
}

}  // namespace

Unit parse(const ParseOptions& options, Diagnostics& diags) {
  Unit unit;
  const int errors_before = diags.error_count();  // `diags` may hold other files' errors
  std::string path = options.file.empty() ? std::string("input.metal") : options.file.string();
  std::optional<std::string> text = options.text ? options.text : read_file(options.file);
  if (!text) {
    diags.error(ErrorKind::io, {path, 0, 0}, "cannot read the Metal source", "check the path");
    return unit;
  }
  unit.text_ = *text;
  diags.add_source(path, *text);
  std::optional<int> version = metal_version_number(options.msl_version);
  if (!version) {
    diags.error(ErrorKind::bad_value, {path, 0, 0},
                fmt::format("MSL version '{}' is not of the form 3.1", options.msl_version),
                "write it as major.minor, e.g. 3.1 (bfloat needs 3.1)");
    return unit;
  }

  MemoryFiles memory;
  memory.files.emplace_back(path, respell_msl_attributes(*text));
  std::map<std::string, LocalHeader> headers;
  std::string main_key = std::filesystem::path(path).filename().string();
  collect_local_headers(path, main_key, *text, options.include_dirs, headers);
  for (const auto& [name, header] : headers) {
    diags.add_source(name, header.text);
    memory.files.emplace_back(name, respell_msl_attributes(header.text));
  }
  for (const auto& f : support::mtlgen_msl_files())
    memory.files.emplace_back(std::string(kShimDir) + "/" + std::string(f.path), std::string(f.bytes));
  memory.files.emplace_back(std::string(kShimDir) + "/" + std::string(kParsePrelude), parse_prelude());
  // libclang would open what an absolute or `..` include names (`/dev/stdin` waits forever).
  bool refused = false;
  auto refuse = [&](const std::string& file, const std::string& content) {
    if (auto v = support::first_include_violation(content, 1)) {
      diags.error(ErrorKind::msl_syntax, {file, v->line, v->column}, fmt::format("`{}`: {}", v->directive, v->why),
                  support::kIncludePolicyHint);
      refused = true;
    }
  };
  refuse(path, *text);
  for (const auto& [name, header] : headers) refuse(name, header.text);
  if (refused) return unit;

  const std::vector<std::string> args = with_precompiled_prelude(clang_arguments(options, path, *version), memory.unsaved());
  std::vector<InstantiationLines> left_out;
  if (options.needed_entry_points)
    left_out = leave_out_instantiations(path, args, memory, *options.needed_entry_points, options.read_whole_up_to);
  unit.instantiations_left_out_ = left_out.size();
  ClangSession session;
  CXErrorCode status = session.parse(path, args, memory.unsaved(), CXTranslationUnit_KeepGoing);
  std::vector<SourceRange> twins;
  if (status == CXError_Success && session.tu) twins = address_space_twins_of(session.tu, path);
  if (!twins.empty()) {  // parsed again as the simulator's copy reads, without them
    blank_ranges(memory, twins);
    status = session.reparse(memory.unsaved());
  }
  if (status != CXError_Success || !session.tu) {
    diags.error(ErrorKind::msl_syntax, {path, 1, 1},
                fmt::format("libclang could not parse the file (error {})", static_cast<int>(status)),
                "this is a bug in mtlgen or libclang; please report it with the file");
    return unit;
  }
  Context ctx(session.tu, path, path);
  Diagnostics errors;  // clang's and conformance's, before they are told per kernel or not
  report_clang_diagnostics(ctx, errors, twins);
  Description d = describe(ctx);
  warn_threadgroup_initializers(d.threadgroup_variables, diags);
  d.address_space_twins = std::move(twins);
  plan_simulator_edits(ctx, d);
  unit.impl_->loop_form = plan_loop_form(ctx, d, *text, headers, options.loop_form_entry_points);
  unit.impl_->cuda_texts = plan_cuda_texts(ctx, d);
  unit.impl_->instantiation_lines = find_instantiation_lines(ctx);
  auto& lines = unit.impl_->instantiation_lines;
  lines.insert(lines.end(), left_out.begin(), left_out.end());
  // One table whatever was left out of the parse: the simulator's copy is the same for every spec.
  std::sort(lines.begin(), lines.end(), [](const auto& a, const auto& b) { return std::tie(a.file, a.first) < std::tie(b.file, b.first); });
  if (options.conformance) check_conformance(session.tu, {path, options.msl_version}, errors);
  if (options.errors_per_kernel) {
    KernelErrors split = split_errors_by_kernel(ctx, d.entry_points, errors.all());
    unit.unreadable_kernels_ = std::move(split.kernels);
    for (const auto& e : split.elsewhere)
      diags.warning(e.kind, e.loc, e.message + " (in no kernel's declarations)", e.hint);
  } else {
    forward(errors, diags);
  }
  if (options.require_entry_point && d.entry_points.empty() && unit.unreadable_kernels_.empty() &&
      diags.error_count() == errors_before)
    diags.error(ErrorKind::msl_syntax, {path, 1, 1}, "no kernel entry point in this file",
                "declare `kernel void name(...)`, or instantiate a kernel template with "
                "`template [[host_name(\"name\")]] [[kernel]] ...`");

  unit.entry_points_ = std::move(d.entry_points);
  unit.function_constants_ = std::move(d.function_constants);
  unit.threadgroup_variables_ = std::move(d.threadgroup_variables);
  unit.impl_->main_path = path;
  unit.impl_->headers = std::move(headers);
  unit.impl_->edits = std::move(ctx.edits);
  return unit;
}

}  // namespace mtlgen::msl
