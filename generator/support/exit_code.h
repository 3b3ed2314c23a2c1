#pragma once
// The exit statuses of `mtlgen` (documented in `mtlgen --help` and docs/cli.md). The stages return
// them so that the CLI only passes them on.
namespace mtlgen::support {

enum ExitCode : int {
  kOk = 0,
  kSpecErrors = 1,     // a spec was rejected; diagnostics were printed
  kUsage = 2,          // bad command line
  kIoError = 3,        // reading inputs or writing outputs failed
  kVerifyFailed = 4,   // a simulated kernel disagreed with its reference or a checker fired
};

}  // namespace mtlgen::support
