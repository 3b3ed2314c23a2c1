#pragma once
// `mtlgen package`: everything `mtlgen generate` writes for a library, made into a package a macOS
// user builds with one command: build files (CMake and a plain Makefile), a preflight (doctor.sh),
// a CI job for a macOS runner, and a manifest with the sha256 of every file; as a tree and as a
// deterministic `<name>-<version>-metal.tar.gz` beside it. Pure: IR and emitted files in, files
// out in memory; the driver writes them.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/kernel.h"
#include "support/output_set.h"

namespace mtlgen::package {

enum class Ci { github, gitlab, none };

struct Options {
  std::string name = "mtlgen_kernels";
  std::string version = "0.1.0";
  Ci ci = Ci::github;
};

// What is wrong with a package name or version ("" when nothing): both become file names.
std::string name_problem(const std::string& name);
std::string version_problem(const std::string& version);

struct Package {
  std::string root;                            // "<name>-<version>": the tree's directory
  std::map<std::string, std::string> files;    // paths relative to `root`
  std::set<std::string> executables;           // among `files`: doctor.sh
  std::string archive_name;                    // "<root>-metal.tar.gz"
  std::string archive;                         // its bytes
};

// `generated`: what driver::generate wrote for `kernels` (its CMakeLists.txt and manifest.json
// are replaced by the package's). Only kernels mtlgen writes the MSL of are compiled by the recipes.
Package build(const std::vector<ir::Kernel>& kernels, const support::OutputSet& generated, const Options& options);

// The files of the output directory: the tree under `<root>/` and the archive beside it.
support::OutputSet outputs(const Package& package);

}  // namespace mtlgen::package
