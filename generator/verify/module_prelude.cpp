#include "verify/module_prelude.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

#include <fmt/format.h>

#include "support/embedded_files.h"
#include "support/hash.h"
#include "support/output_set.h"

namespace mtlgen::support {
const std::vector<EmbeddedFile>& mtlgen_verify_files();  // the shim, embedded by CMake
}

namespace mtlgen::verify {

namespace fs = std::filesystem;

CacheLock::CacheLock(const fs::path& path) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  fd_ = ::open((path.string() + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ >= 0) {
    while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
}

CacheLock::~CacheLock() {
  if (fd_ >= 0) ::close(fd_);
}

const std::string& shim_hash() {
  static const std::string hash = [] {
    std::string all;
    for (const auto& f : support::mtlgen_verify_files()) all += fmt::format("{}\n{}\n", f.path, support::hash_hex(f.bytes));
    return support::hash_hex(all);
  }();
  return hash;
}

namespace {

// Written last: a shim directory without it is still being written (or was abandoned halfway).
const char* kComplete = ".complete";

std::string prelude_text(const std::vector<std::string>& includes, PreludeKind kind) {
  std::string text = "// mtlgen: the precompiled prelude of simulator modules (module_prelude.h). Do not edit.\n";
  for (const auto& f : includes) text += fmt::format("#include \"{}\"\n", f);
  if (kind == PreludeKind::kernel) return text + "#include <metal_stdlib>\n";
  for (const char* h : {"algorithm", "array", "cmath", "cstddef", "cstdint", "cstdio", "cstring", "limits", "map",
                        "optional", "span", "stdexcept", "string", "utility", "vector", "mtlsim/host_dispatch.h"}) {
    text += fmt::format("#include <{}>\n", h);
  }
  return text;
}

// Builds <dir>/prelude.h.gch from `flags` (no -include, no -I); a failed build leaves the header
// alone, which then is read as text.
void build_prelude(const fs::path& dir, const std::string& text, std::vector<std::string> argv, const fs::path& shim,
                   const RunCompiler& run) {
  const fs::path header = dir / "prelude.h", gch = dir / "prelude.h.gch";
  const fs::path tmp = fs::path(gch.string() + fmt::format(".tmp.{}", ::getpid()));
  std::ofstream(header, std::ios::binary) << text;
  argv.insert(argv.end(), {"-I", shim.string(), "-x", "c++-header", header.string(), "-o", tmp.string()});
  std::error_code ec;
  if (run(argv, dir) == 0) fs::rename(tmp, gch, ec);
  else std::ofstream(dir / "prelude.failed") << "g++ could not precompile prelude.h: modules read it as text\n";
  fs::remove(tmp, ec);
}

}  // namespace

fs::path shared_shim(const fs::path& cache) {
  const fs::path dir = cache / "shim" / shim_hash();
  if (fs::exists(dir / kComplete)) return fs::absolute(dir);
  CacheLock lock(dir);
  if (!fs::exists(dir / kComplete)) {
    support::OutputSet files;
    for (const auto& f : support::mtlgen_verify_files()) files.add(std::string(f.path), std::string(f.bytes));
    support::write_outputs(files, dir);
    std::ofstream(dir / kComplete) << "";
  }
  return fs::absolute(dir);
}

std::vector<std::string> with_precompiled_prelude(const std::vector<std::string>& compile, PreludeKind kind,
                                                  const fs::path& shim, const std::string& identity,
                                                  const RunCompiler& run) {
  std::vector<std::string> includes, flags, rest;  // rest: flags plus the -I options, for the unit itself
  for (size_t i = 0; i < compile.size(); ++i) {
    const bool has_value = i + 1 < compile.size();
    if (compile[i] == "-include" && has_value) {
      includes.push_back(compile[++i]);
    } else if (compile[i] == "-I" && has_value) {
      rest.insert(rest.end(), {compile[i], compile[i + 1]});
      ++i;
    } else {
      flags.push_back(compile[i]);
      rest.push_back(compile[i]);
    }
  }
  const std::string text = prelude_text(includes, kind);
  std::string key = identity + "\n" + shim_hash() + "\n" + text;
  for (const auto& f : flags) key += f + "\n";
  const fs::path dir = shim / "prelude" / support::hash_hex(key);
  if (!fs::exists(dir / "prelude.h.gch") && !fs::exists(dir / "prelude.failed")) {
    CacheLock lock(dir);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (!fs::exists(dir / "prelude.h.gch") && !fs::exists(dir / "prelude.failed")) build_prelude(dir, text, flags, shim, run);
  }
  rest.insert(rest.end(), {"-include", (dir / "prelude.h").string()});
  return rest;
}

}  // namespace mtlgen::verify
