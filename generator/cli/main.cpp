// mtlgen: the command line. It only wires the pipeline stages together (see cli/driver.h).
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/driver.h"
#include "support/version.h"

namespace {

const char* kExitCodes =
    "Exit codes:\n"
    "  0  success\n"
    "  1  a spec was rejected (diagnostics on stderr as file:line:col: error: ...)\n"
    "  2  bad command line\n"
    "  3  reading or writing files failed\n"
    "  4  verification failed (a kernel disagreed with its reference or a checker fired)\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace mtlgen;
  CLI::App app{"mtlgen: Metal compute kernels from YAML specs, verified on Linux"};
  app.set_version_flag("--version", std::string("mtlgen ") + kVersion);
  app.footer(kExitCodes);
  app.require_subcommand(1);

  std::vector<std::string> inputs;
  std::string out_dir;
  bool quiet = false;

  auto* generate = app.add_subcommand("generate", "Emit MSL, C++ reference, Objective-C++ glue and manifest.json");
  generate->add_option("specs", inputs, "Spec files or directories of *.yaml")->required();
  generate->add_option("-o,--out", out_dir, "Output directory (only files inside it are written)")->required();
  generate->add_flag("-q,--quiet", quiet, "Print nothing on success");

  auto* check = app.add_subcommand("check", "Validate specs without writing anything");
  check->add_option("specs", inputs, "Spec files or directories of *.yaml")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : driver::kUsage;
  }
  if (*generate) return driver::run_generate(inputs, out_dir, quiet, std::cout, std::cerr);
  if (*check) return driver::run_check(inputs, std::cout, std::cerr);
  return driver::kUsage;
}
