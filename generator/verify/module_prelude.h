// What the compiles of every simulator module share, kept once per cache directory: the shim
// (one copy, named by every module's -I) and precompiled preludes. Parsing the shim's
// <metal_stdlib>, or the C++ standard library of the host side, was 60-70% of a small module's
// compile; a prelude precompiled per flag set (g++ -x c++-header) is parsed once per cache.
// Correctness never depends on it: a compiler that cannot use the .gch reads the header instead.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace mtlgen::verify {

// An exclusive flock on <path>.lock for as long as it lives; released by the kernel if the
// process dies. A lock that cannot be had (a read-only cache) is skipped: building still works.
class CacheLock {
 public:
  explicit CacheLock(const std::filesystem::path& path);
  ~CacheLock();
  CacheLock(const CacheLock&) = delete;
  CacheLock& operator=(const CacheLock&) = delete;

 private:
  int fd_ = -1;
};

// <cache>/shim/<hash of its files>/: the simulator's shim, written once (atomically) per version.
std::filesystem::path shared_shim(const std::filesystem::path& cache);

// The hash of the shim's files (part of every module's key).
const std::string& shim_hash();

// What a translation unit's prelude holds besides its -include files.
enum class PreludeKind {
  kernel,  // the shim's <metal_stdlib>
  host,    // the C++ standard library the reference and the bridge use, and mtlsim/host_dispatch.h
};

// `compile` (the compiler's words and every flag of a `-c` compile except the input and -o),
// rewritten to take its `-include` files and the prelude of `kind` from one precompiled header
// under <shim>/prelude/<hash of the flags>/, built now if missing. `identity` names the compiler's
// version (a .gch is only valid for the compiler that wrote it). `run` runs a compiler (argv,
// working directory) and returns its exit status.
using RunCompiler = std::function<int(const std::vector<std::string>& argv, const std::filesystem::path& cwd)>;
std::vector<std::string> with_precompiled_prelude(const std::vector<std::string>& compile, PreludeKind kind,
                                                  const std::filesystem::path& shim, const std::string& identity,
                                                  const RunCompiler& run);

}  // namespace mtlgen::verify
