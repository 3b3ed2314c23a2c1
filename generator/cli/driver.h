#pragma once
// What the CLI's subcommands do, as functions the tests can call without a process.
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "check_msl/checked_library.h"
#include "ir/kernel.h"
#include "package/package.h"
#include "support/diagnostics.h"
#include "support/exit_code.h"
#include "support/output_set.h"

namespace mtlgen::driver {

using support::ExitCode;
using support::kIoError;
using support::kOk;
using support::kSpecErrors;
using support::kUsage;
using support::kVerifyFailed;

// The library as every subcommand loads it (check_msl/checked_library.h); with $MTLGEN_CACHE_DIR
// set, code that passed libclang before is not parsed again (<dir>/checked/).
using check_msl::load_library;

// Runs every shipped emitter on every kernel into memory, then adds the manifest of what they wrote.
support::OutputSet generate(const std::vector<ir::Kernel>& kernels);

int run_check(const std::vector<std::string>& inputs, std::ostream& out, std::ostream& err,
              const std::vector<std::string>& include_dirs = {});

// Before `verify` runs anything: the inputs name spec files (else kIoError, as `check` says), and
// `case_filter`, when given, names a test case of at least one of them (else kUsage). Spec errors
// are left for verify to report. kOk when verify may go on.
int check_selection(const std::vector<std::string>& inputs, const std::string& case_filter, std::ostream& err,
                    const std::vector<std::string>& include_dirs = {});
// `mtlgen import`: parses `source` with the MSL front end and writes one spec skeleton per kernel
// (or only `entry`'s) into `out_dir`. A skeleton that exists with other bytes is the user's work:
// kept unless `force`.
struct ImportOptions {
  std::filesystem::path source;
  std::filesystem::path out_dir;
  std::string entry;
  std::vector<std::filesystem::path> include_dirs;
  bool force = false;
  bool quiet = false;
};
int run_import(const ImportOptions& options, std::ostream& out, std::ostream& err);

int run_generate(const std::vector<std::string>& inputs, const std::filesystem::path& out_dir, bool quiet,
                 std::ostream& out, std::ostream& err, const std::vector<std::string>& include_dirs = {});

// `mtlgen package`: generates as `generate` does, then writes the package tree `<name>-<version>/`
// and `<name>-<version>-metal.tar.gz` into `out_dir` (generator/package).
struct PackageOptions {
  std::vector<std::string> inputs;
  std::vector<std::string> include_dirs;  // -I
  std::filesystem::path out_dir;
  package::Options package;
  bool quiet = false;
};
int run_package(const PackageOptions& options, std::ostream& out, std::ostream& err);

}  // namespace mtlgen::driver
