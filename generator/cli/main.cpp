// mtlgen: the command line. It only wires the pipeline stages together (see cli/driver.h).
#include <CLI/CLI.hpp>
#include <signal.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>

#include "cli/driver.h"
#include "cuda/bench.h"
#include "cuda/gpu_verify.h"
#include "report/report.h"
#include "support/version.h"
#include "verify/verify.h"

namespace {

const char* kExitCodes =
    "Exit codes:\n"
    "  0  success\n"
    "  1  a spec was rejected (diagnostics on stderr as file:line:col: error: ...)\n"
    "  2  bad command line\n"
    "  3  reading or writing files failed\n"
    "  4  verification failed (a kernel disagreed with its reference or a checker fired)\n";

// A count option: a whole number from 1 to `max`.
CLI::Validator count_from_one(int max) {
  return CLI::Validator(
      [max](std::string& text) -> std::string {
        int v = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc() || end != text.data() + text.size() || v < 1 || v > max) {
          return "must be a whole number from 1 to " + std::to_string(max) + ", not `" + text + "`";
        }
        return {};
      },
      "1.." + std::to_string(max));
}

// Seconds: a finite number above zero (`nan` compares false with everything, so check for it).
CLI::Validator positive_seconds() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        double v = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !std::isfinite(v) || v <= 0) {
          return "must be a number of seconds above 0, not `" + text + "`";
        }
        return {};
      },
      "SECONDS");
}

// `K/N` with 1 <= K <= N, nothing after it.
bool parse_shard(const std::string& text, int& index, int& count) {
  const char* p = text.data();
  const char* end = p + text.size();
  auto k = std::from_chars(p, end, index);
  if (k.ec != std::errc() || k.ptr == end || *k.ptr != '/') return false;
  auto n = std::from_chars(k.ptr + 1, end, count);
  return n.ec == std::errc() && n.ptr == end && count >= 1 && index >= 1 && index <= count;
}

// `--json` names a regular file to replace atomically, or a new one in an existing directory;
// never a directory, FIFO or device (which a rename would replace or an open would block on).
std::string json_path_problem(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path.empty()) return "--json needs a file name";
  auto status = fs::status(path, ec);
  if (fs::exists(status) && !fs::is_regular_file(status)) return "--json " + path + ": not a regular file";
  fs::path parent = fs::path(path).parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec)) return "--json " + path + ": no such directory";
  return {};
}

// `-I DIR` (repeatable): where the #includes of `source:` kernels are also looked for.
void add_include_option(CLI::App* cmd, std::vector<std::string>& dirs) {
  cmd->add_option("-I", dirs,
                  "Further directory for the #includes of hand-written kernels (`source:`), searched after the "
                  "file's own directory and the spec's `include_dirs:` (repeatable)")
      ->check(CLI::ExistingDirectory)
      ->type_name("DIR");
}

// A subcommand: its options (shared with `run`, filled by the parse) and what runs when it was chosen.
struct Subcommand {
  CLI::App* app;
  std::function<int()> run;
};

Subcommand generate_command(CLI::App& app) {
  struct Options {
    std::vector<std::string> inputs, include_dirs;
    std::string out_dir;
    bool quiet = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("generate",
                                 "Emit MSL, C++ references, Objective-C++ glue and runtime, bench and "
                                 "autotune programs, their CMakeLists.txt and manifest.json");
  cmd->add_option("specs", o->inputs, "Spec files or directories of *.yaml")->required();
  cmd->add_option("-o,--out", o->out_dir, "Output directory (only files inside it are written)")->required();
  cmd->add_flag("-q,--quiet", o->quiet, "Print nothing on success");
  add_include_option(cmd, o->include_dirs);
  return {cmd, [o] {
            return mtlgen::driver::run_generate(o->inputs, o->out_dir, o->quiet, std::cout, std::cerr, o->include_dirs);
          }};
}

Subcommand package_command(CLI::App& app) {
  struct Options {
    mtlgen::driver::PackageOptions package;
    std::string ci = "github";
  };
  auto o = std::make_shared<Options>();
  auto& po = o->package;
  auto* cmd = app.add_subcommand(
      "package",
      "Write <name>-<version>/ and a byte-identical <name>-<version>-metal.tar.gz: the generated files, "
      "CMakeLists.txt and Makefile for macOS, doctor.sh, a CI job and manifest.json with sha256 of every file");
  cmd->add_option("specs", po.inputs, "Spec files or directories of *.yaml")->required();
  cmd->add_option("-o,--out", po.out_dir, "Output directory (only files inside it are written)")->required();
  cmd->add_option("--name", po.package.name, "Package name (default mtlgen_kernels)");
  cmd->add_option("--version", po.package.version, "Package version (default 0.1.0)");
  cmd->add_option("--ci", o->ci, "CI job for a macOS runner: github (.github/workflows/metal.yml, default), "
                                 "gitlab (.gitlab-ci.yml) or none")
      ->check(CLI::IsMember({"github", "gitlab", "none"}));
  cmd->add_flag("-q,--quiet", po.quiet, "Print nothing on success");
  add_include_option(cmd, po.include_dirs);
  return {cmd, [o] {
            using mtlgen::package::Ci;
            o->package.package.ci = o->ci == "gitlab" ? Ci::gitlab : o->ci == "none" ? Ci::none : Ci::github;
            return mtlgen::driver::run_package(o->package, std::cout, std::cerr);
          }};
}

Subcommand check_command(CLI::App& app) {
  struct Options {
    std::vector<std::string> inputs, include_dirs;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("check", "Validate specs; writes nothing but libclang's verdicts and precompiled headers under $MTLGEN_CACHE_DIR when that is set");
  cmd->add_option("specs", o->inputs, "Spec files or directories of *.yaml")->required();
  add_include_option(cmd, o->include_dirs);
  return {cmd, [o] { return mtlgen::driver::run_check(o->inputs, std::cout, std::cerr, o->include_dirs); }};
}

Subcommand import_command(CLI::App& app) {
  struct Options {
    mtlgen::driver::ImportOptions import;
    std::vector<std::string> include_dirs;
  };
  auto o = std::make_shared<Options>();
  auto& io = o->import;
  auto* cmd = app.add_subcommand(
      "import", "Write spec skeletons for the kernels of a hand-written .metal file, each unknown marked TODO");
  cmd->add_option("source", io.source, "The .metal file")->required();
  cmd->add_option("--entry", io.entry, "Only the kernel with this host name (default: every kernel)");
  cmd->add_option("-o,--out", io.out_dir, "Directory for the skeletons (<name>.yaml)")->required();
  cmd->add_option("-I", o->include_dirs, "Further directory for #include \"...\" (the file's own is searched first)")
      ->check(CLI::ExistingDirectory)
      ->type_name("DIR");
  cmd->add_flag("--force", io.force, "Replace skeletons that exist with other contents");
  cmd->add_flag("-q,--quiet", io.quiet, "Print nothing on success");
  return {cmd, [o] {
            o->import.include_dirs.assign(o->include_dirs.begin(), o->include_dirs.end());
            return mtlgen::driver::run_import(o->import, std::cout, std::cerr);
          }};
}

// What `verify` takes as words, turned into VerifyOptions once the parse is done.
struct VerifyWords {
  mtlgen::verify::VerifyOptions verify;
  std::string variant = "default", shard = "1/1", races = "orders", exec = "loops";
  bool no_result_cache = false;
};

void add_verify_selection(CLI::App* cmd, VerifyWords& w) {
  auto& vo = w.verify;
  cmd->add_option("specs", vo.inputs, "Spec files or directories of *.yaml")->required();
  add_include_option(cmd, vo.include_dirs);
  cmd->add_option("--variant", w.variant,
                  "default: each dtype at its default tuning; each: every tune point once (at the first dtype) and "
                  "every dtype once (at its default tuning); all: every tune point of every dtype")
      ->check(CLI::IsMember({"default", "each", "all"}));
  cmd->add_option("--case", vo.case_filter, "Run only the test case with this name (the only way to run a benchmark case)");
  cmd->add_option("--seed", vo.seed, "Seed of the shuffled lane order (default 1)");
  cmd->add_option("--races", w.races,
                  "orders: find races by comparing outputs across lane orders (default); exact: also run a "
                  "happens-before race detector on a -fsanitize=thread build of the kernel, which finds races "
                  "that do not change outputs and races between threadgroups (slower)")
      ->check(CLI::IsMember({"orders", "exact"}));
  cmd->add_option("--exec", w.exec,
                  "loops: run a kernel's barrier-free regions as loops over its threads where the MSL front "
                  "end can prove the structure, one fiber per thread elsewhere (default); fibers: one fiber "
                  "per thread everywhere")
      ->check(CLI::IsMember({"loops", "fibers"}));
  cmd->add_flag("--report-same-value-stores", vo.report_same_value_stores,
                "With --races exact: also report unordered stores of the same value to one element "
                "(benign by default)");
}

void add_verify_running(CLI::App* cmd, VerifyWords& w) {
  auto& vo = w.verify;
  cmd->add_option("--jobs", vo.jobs, "Cases simulated, and simulator modules compiled, at once (default: number of cores)")->check(count_from_one(4096));
  cmd->add_option("--workers", vo.workers, "Simulator threads per case (default 1)")->check(count_from_one(256));
  cmd->add_option("--shard", w.shard, "K/N: run the K-th of N equal slices of the cases, for CI matrices");
  cmd->add_option("--timeout", vo.timeout_seconds, "Watchdog per case, seconds (default 120)")->check(positive_seconds());
  cmd->add_option("--json", vo.json_path, "Also write every result to this JSON file");
  cmd->add_option("--cache-dir", vo.module.cache_dir, "Where compiled simulator modules and passing results are kept");
  cmd->add_option("--quick", vo.quick_threadgroups,
                  "N: a case whose grid has more than N threadgroups simulates only N (the first, the last "
                  "and a sample seeded by --seed) and compares what they wrote; reported as partial coverage")
      ->check(CLI::Range(uint64_t{2}, uint64_t{1} << 32));
  cmd->add_flag("--no-result-cache", w.no_result_cache,
                "Run every case, even those that passed before with nothing they depend on changed");
  cmd->add_flag("-q,--quiet", vo.quiet, "Print failures and the summary only");
  cmd->add_option("--gpu", vo.gpu,
                  "cuda: run the cases on an NVIDIA GPU (the MSL rewritten to CUDA by the MSL front end, "
                  "built with nvcc) instead of the simulator; skipped with one line where nvcc is missing")
      ->check(CLI::IsMember({"cuda"}));
  cmd->add_flag("--sanitize", vo.sanitize,
                "With --gpu cuda: also run each case under compute-sanitizer (memcheck, racecheck, synccheck, "
                "initcheck) and name the .metal and spec lines of what it reports");
}

int run_verify(VerifyWords& w) {
  using namespace mtlgen;
  auto& vo = w.verify;
  if (vo.sanitize && vo.gpu.empty()) {
    std::cerr << "mtlgen verify: --sanitize needs --gpu cuda\n  hint: the simulator's own checkers always run\n";
    return driver::kUsage;
  }
  vo.variants = w.variant == "all"    ? ir::VariantSelection::all
                : w.variant == "each" ? ir::VariantSelection::each
                                      : ir::VariantSelection::defaults;
  if (!vo.gpu.empty()) vo.gpu_backend = &cuda::gpu_backend();  // "cuda", the only one
  vo.exact_races = w.races == "exact";
  vo.exec = w.exec == "fibers" ? mtlsim::ExecPath::fibers : mtlsim::ExecPath::automatic;
  vo.result_cache = !w.no_result_cache;
  vo.progress_line = ::isatty(STDOUT_FILENO) == 1 && !std::getenv("CI");
  if (!parse_shard(w.shard, vo.shard_index, vo.shard_count)) {
    std::cerr << "mtlgen verify: --shard wants K/N with 1 <= K <= N, e.g. 2/4, not `" << w.shard << "`\n";
    return driver::kUsage;
  }
  if (std::string problem = vo.json_path.empty() ? "" : json_path_problem(vo.json_path); !problem.empty()) {
    std::cerr << "mtlgen verify: " << problem << "\n";
    return driver::kUsage;
  }
  if (int rc = driver::check_selection(vo.inputs, vo.case_filter, std::cerr, vo.include_dirs); rc != driver::kOk) return rc;
  try {
    return verify::run_verify(vo, std::cout, std::cerr);
  } catch (const std::filesystem::filesystem_error& e) {  // --json could not be written
    std::cerr << e.path1().generic_string() << ": error: " << e.what() << "\n";
    return driver::kIoError;
  }
}

Subcommand verify_command(CLI::App& app) {
  auto w = std::make_shared<VerifyWords>();
  auto* cmd = app.add_subcommand(
      "verify", "Run every variant and test case in the Linux simulator and compare with the C++ reference");
  add_verify_selection(cmd, *w);
  add_verify_running(cmd, *w);
  return {cmd, [w] { return run_verify(*w); }};
}

Subcommand bench_command(CLI::App& app) {
  struct Options {
    mtlgen::cuda::BenchOptions bench;
    std::string gpu;
  };
  auto o = std::make_shared<Options>();
  auto& bo = o->bench;
  auto* cmd = app.add_subcommand(
      "bench", "Time every tune point at the spec's benchmark cases on an NVIDIA GPU (a relative guide, not an Apple "
               "GPU timing)");
  cmd->add_option("specs", bo.inputs, "Spec files or directories of *.yaml")->required();
  add_include_option(cmd, bo.include_dirs);
  cmd->add_option("--gpu", o->gpu, "cuda (the only backend)")->required()->check(CLI::IsMember({"cuda"}));
  cmd->add_option("--kernel", bo.kernel_filter, "Only the kernel of this name");
  cmd->add_option("--case", bo.case_filter,
                  "Time this test case (default: the spec's benchmark cases, else its largest test case)");
  cmd->add_option("--warmup", bo.warmups, "Untimed launches first (default 5)")->check(CLI::Range(0, 10000));
  cmd->add_option("--repeats", bo.repeats, "Timed launches; the median is reported (default 50)")
      ->check(count_from_one(100000));
  cmd->add_option("--json", bo.json_path, "Also write the sweep to this JSON file");
  cmd->add_option("--cache-dir", bo.module.cache_dir, "Where compiled modules are kept");
  return {cmd, [o] { return mtlgen::cuda::run_bench(o->bench, std::cout, std::cerr); }};
}

Subcommand report_command(CLI::App& app) {
  struct Options {
    mtlgen::report::ReportOptions report;
    bool no_counters = false;
  };
  auto o = std::make_shared<Options>();
  auto& ro = o->report;
  auto* cmd = app.add_subcommand(
      "report", "Write DIR/index.html and DIR/report.json: per kernel the predicted roofline and tune-point sweep per "
                "Apple chip, bytes and coalescing counted by the simulator, the cost model checked, and lints");
  cmd->add_option("specs", ro.inputs, "Spec files or directories of *.yaml")->required();
  add_include_option(cmd, ro.include_dirs);
  cmd->add_option("-o,--out", ro.out_dir, "Output directory")->required();
  cmd->add_flag("--no-counters", o->no_counters, "Predict from the specs alone, without running the kernels in the simulator");
  cmd->add_option("--chart-library", ro.chart_library,
                  std::string("Chart.js to inline (default ") + mtlgen::report::kChartLibrary + ", libjs-chart.js)");
  cmd->add_option("--timeout", ro.timeout_seconds, "Watchdog per counted case, seconds (default 120)")
      ->check(positive_seconds());
  cmd->add_option("--cache-dir", ro.module.cache_dir, "Where compiled simulator modules are kept");
  cmd->add_flag("-q,--quiet", ro.quiet, "Print the lints only");
  cmd->add_option("--measured", ro.measured,
                  "Times to plot beside the predictions (repeatable): the tuning file autotune_<kernel> writes "
                  "on a Mac, or `mtlgen bench --gpu cuda --json` output; a kernel or variant the library lacks "
                  "is a warning, an unreadable or malformed file an error (exit 3)")
      ->allow_extra_args(false)
      ->type_name("FILE");
  return {cmd, [o] {
            o->report.counters = !o->no_counters;
            return mtlgen::report::run_report(o->report, std::cout, std::cerr);
          }};
}

}  // namespace

int main(int argc, char** argv) {
  // `ulimit -f`: fail the write (and clean up the temp file) rather than die by SIGXFSZ.
  ::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"mtlgen: Metal compute kernels from YAML specs, verified on Linux"};
  app.set_version_flag("--version", std::string("mtlgen ") + mtlgen::kVersion);
  app.footer(kExitCodes);
  app.require_subcommand(1);
  const Subcommand subcommands[] = {generate_command(app), package_command(app), check_command(app), import_command(app),
                                    verify_command(app),   bench_command(app),   report_command(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : mtlgen::driver::kUsage;
  }
  for (const auto& s : subcommands) {
    if (*s.app) return s.run();
  }
  return mtlgen::driver::kUsage;
}
