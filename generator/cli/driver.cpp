#include "cli/driver.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "emit_common/emitter.h"
#include "emit_manifest/manifest_emitter.h"
#include "import/spec_skeleton.h"
#include "msl/msl_unit.h"
#include "spec/library.h"

namespace mtlgen::driver {

namespace fs = std::filesystem;
using support::ErrorKind;

support::OutputSet generate(const std::vector<ir::Kernel>& kernels) {
  support::OutputSet files = emit::generate_all(kernels);
  emit::emit_manifest(kernels, files);  // lists what the emitters wrote, so it comes last
  return files;
}

namespace {

std::string counted(size_t n, const char* noun) { return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s"); }

int report(const support::Diagnostics& diags, std::ostream& err) {
  fmt::print(err, "{}", diags.format_all());
  if (!diags.has_errors()) return kOk;
  fmt::print(err, "{} error{} generated.\n", diags.error_count(), diags.error_count() == 1 ? "" : "s");
  bool io = std::any_of(diags.all().begin(), diags.all().end(),
                        [](const support::Diagnostic& d) { return d.kind == support::ErrorKind::io; });
  return io ? kIoError : kSpecErrors;
}

// Each kernel import could not read, at its definition, with the first errors that stopped it.
int report_unreadable(const std::vector<msl::UnreadableKernel>& kernels, const support::Diagnostics& sources,
                      std::ostream& err) {
  constexpr size_t kReasonsShown = 3;
  size_t entries = 0;
  for (const auto& k : kernels) {
    entries += k.host_names.size();
    support::Diagnostic head{support::Severity::error, ErrorKind::msl_syntax, k.loc, k.summary(),
                             "no skeleton was written for it; the errors below are in what it uses"};
    fmt::print(err, "{}", sources.format(head));
    for (size_t i = 0; i < k.reasons.size() && i < kReasonsShown; ++i) fmt::print(err, "{}", sources.format(k.reasons[i]));
    if (k.reasons.size() > kReasonsShown) fmt::print(err, "  ({} more)\n", k.reasons.size() - kReasonsShown);
  }
  fmt::print(err, "{} skipped ({}); every other kernel has its skeleton.\n", counted(kernels.size(), "kernel"),
             counted(entries, "entry point"));
  return kSpecErrors;
}

}  // namespace

int run_check(const std::vector<std::string>& inputs, std::ostream& out, std::ostream& err,
              const std::vector<std::string>& include_dirs) {
  support::Diagnostics diags;
  auto kernels = load_library(inputs, diags, include_dirs);
  if (int rc = report(diags, err); rc != kOk) return rc;
  for (const auto& k : kernels) {
    std::string what = k.is_family()           ? fmt::format(" (family `{}` of {} kernels)", k.name, k.family->kernels.size())
                       : !k.family_name.empty() ? fmt::format(" (kernel `{}` of family `{}`)", k.name, k.family_name)
                                                : "";
    const auto benchmarks = std::count_if(k.tests.cases.begin(), k.tests.cases.end(), [](const auto& c) { return c.benchmark; });
    fmt::print(out, "{}{}: ok ({}, {}{})\n", k.spec_path, what, counted(k.variants.size(), "variant"),
               counted(k.tests.cases.size(), "test case"),
               benchmarks ? fmt::format(", {} of them benchmark only", benchmarks) : "");
  }
  return kOk;
}

int check_selection(const std::vector<std::string>& inputs, const std::string& case_filter, std::ostream& err,
                    const std::vector<std::string>& include_dirs) {
  support::Diagnostics diags;
  auto specs = spec::collect_spec_files(inputs, diags);
  if (diags.has_errors()) return report(diags, err);
  if (case_filter.empty()) return kOk;
  support::Diagnostics spec_diags;  // verify reports these itself
  std::set<std::string> names;
  for (const auto& k : spec::load_library(specs, spec_diags, include_dirs)) {
    for (const auto& c : k.tests.cases) names.insert(c.name);
  }
  if (names.count(case_filter) || spec_diags.has_errors()) return kOk;
  fmt::print(err, "mtlgen verify: error: no test case is named `{}`\n  hint: {}\n", case_filter,
             names.empty() ? std::string("the specs declare no test cases")
                           : fmt::format("test cases are: {}", fmt::join(names, ", ")));
  return kUsage;
}

int run_generate(const std::vector<std::string>& inputs, const fs::path& out_dir, bool quiet, std::ostream& out,
                 std::ostream& err, const std::vector<std::string>& include_dirs) {
  if (out_dir.empty()) {  // would write into the working directory
    fmt::print(err, "mtlgen generate: error: -o needs a directory, not an empty string\n");
    return kUsage;
  }
  support::Diagnostics diags;
  auto kernels = load_library(inputs, diags, include_dirs);
  if (int rc = report(diags, err); rc != kOk) return rc;
  support::OutputSet files = generate(kernels);
  try {
    auto stats = support::write_outputs(files, out_dir);
    if (!quiet) {
      fmt::print(out, "mtlgen: {} kernels -> {}: {} files written, {} unchanged\n", kernels.size(),
                 out_dir.generic_string(), stats.written, stats.unchanged);
    }
  } catch (const fs::filesystem_error& e) {
    fmt::print(err, "{}: error: {}\n", e.path1().generic_string(), e.what());
    return kIoError;
  }
  return kOk;
}

namespace {

// doctor.sh is a program: mode 0755 in the tree as in the archive. write_outputs refused any
// symbolic link on the way, so this changes the file it wrote.
void mark_executable(const package::Package& pkg, const fs::path& out_dir) {
  for (const auto& path : pkg.executables) {
    const fs::perms exec = fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                           fs::perms::others_read | fs::perms::others_exec;
    fs::path file = out_dir / pkg.root / path;
    if ((fs::status(file).permissions() & fs::perms::mask) != exec) fs::permissions(file, exec, fs::perm_options::replace);
  }
}

}  // namespace

int run_package(const PackageOptions& options, std::ostream& out, std::ostream& err) {
  std::string problem = options.out_dir.empty() ? "-o needs a directory, not an empty string"
                                                : package::name_problem(options.package.name);
  if (problem.empty()) problem = package::version_problem(options.package.version);
  if (!problem.empty()) {
    fmt::print(err, "mtlgen package: error: {}\n", problem);
    return kUsage;
  }
  support::Diagnostics diags;
  auto kernels = load_library(options.inputs, diags, options.include_dirs);
  if (int rc = report(diags, err); rc != kOk) return rc;
  if (std::all_of(kernels.begin(), kernels.end(), [](const ir::Kernel& k) { return k.is_source(); })) {
    fmt::print(err, "mtlgen package: error: no kernel to package\n  hint: a package compiles the MSL mtlgen "
               "writes; hand-written kernels (`source:`) ship their own .metal\n");
    return kSpecErrors;
  }
  package::Package pkg = package::build(kernels, generate(kernels), options.package);
  try {
    auto stats = support::write_outputs(package::outputs(pkg), options.out_dir);
    mark_executable(pkg, options.out_dir);
    if (!options.quiet) {
      fmt::print(out, "mtlgen: {} kernels -> {}/{}/ and {}: {} files written, {} unchanged\n", kernels.size(),
                 options.out_dir.generic_string(), pkg.root, pkg.archive_name, stats.written, stats.unchanged);
    }
  } catch (const fs::filesystem_error& e) {
    fmt::print(err, "{}: error: {}\n", e.path1().generic_string(), e.what());
    return kIoError;
  }
  return kOk;
}

namespace {

// Every skeleton that would replace different bytes is named before anything is written.
bool would_overwrite(const support::OutputSet& files, const fs::path& out_dir, std::ostream& err) {
  bool refused = false;
  for (const auto& [name, text] : files.files()) {
    std::error_code ec;
    if (!fs::exists(out_dir / name, ec) || support::has_content(out_dir / name, text)) continue;
    fmt::print(err, "{}: error: exists with other contents (your completed spec?)\n  hint: import writes only new "
               "skeletons; move it away or pass --force to replace it\n", (out_dir / name).generic_string());
    refused = true;
  }
  return refused;
}

}  // namespace

int run_import(const ImportOptions& options, std::ostream& out, std::ostream& err) {
  if (options.out_dir.empty()) {
    fmt::print(err, "mtlgen import: error: -o needs a directory, not an empty string\n");
    return kUsage;
  }
  support::Diagnostics diags;
  std::error_code ec;
  if (!fs::is_regular_file(options.source, ec)) {
    diags.error(ErrorKind::io, {spec::display_path(options.source)}, "no such .metal file", "pass the kernel source to import");
    return report(diags, err);
  }
  msl::ParseOptions parse;
  parse.file = options.source;
  parse.include_dirs = options.include_dirs;
  parse.errors_per_kernel = true;
  msl::Unit unit = msl::parse(parse, diags);
  if (diags.has_errors()) return report(diags, err);
  if (!options.entry.empty() && !unit.find(options.entry)) {
    for (const auto& k : unit.unreadable_kernels())
      if (std::count(k.host_names.begin(), k.host_names.end(), options.entry)) return report_unreadable({k}, diags, err);
  }
  import::SkeletonOptions so{options.source, options.out_dir, spec::display_path(options.source), options.entry};
  auto skeletons = import::spec_skeletons(unit, so, diags);
  if (diags.has_errors()) return report(diags, err);
  const auto& skipped = options.entry.empty() ? unit.unreadable_kernels() : std::vector<msl::UnreadableKernel>{};
  support::OutputSet files;
  for (const auto& s : skeletons) files.add(s.file_name, s.text);
  if (!options.force && would_overwrite(files, options.out_dir, err)) return kIoError;
  try {
    support::write_outputs(files, options.out_dir);
  } catch (const fs::filesystem_error& e) {
    fmt::print(err, "{}: error: {}\n", e.path1().generic_string(), e.what());
    return kIoError;
  }
  fmt::print(err, "{}", diags.format_all());  // warnings: errors in no kernel's declarations
  if (!options.quiet) {
    for (const auto& s : skeletons) {
      fmt::print(out, "{}: {} TODO{} to fill in\n", (options.out_dir / s.file_name).generic_string(), s.placeholders,
                 s.placeholders == 1 ? "" : "s");
    }
  }
  return skipped.empty() ? kOk : report_unreadable(skipped, diags, err);
}

}  // namespace mtlgen::driver
