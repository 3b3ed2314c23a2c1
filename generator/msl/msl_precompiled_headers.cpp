// Headers precompiled by libclang. Every MSL parse starts with the shim's <metal_stdlib>
// (parse_prelude), and every check of a C++ reference with the standard library: most of a small
// kernel's parse (0.6 of 0.65 s with clang 14). Each is saved once (per cache directory, else per
// process) and set of arguments, and each parse loads it with -include-pch.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "msl/msl_internal.h"
#include "support/hash.h"

namespace mtlgen::msl {

namespace {

namespace fs = std::filesystem;

// The precompiled headers of this process, removed when it ends (by the process that made them:
// a forked case child exits too).
class PrecompiledFiles {
 public:
  ~PrecompiledFiles() {
    if (::getpid() != owner_) return;
    std::error_code ignored;
    for (const auto& [key, path] : paths)
      if (!shared.count(path)) fs::remove(path, ignored);
  }
  std::mutex mutex;
  std::map<std::string, std::string> paths;  // by header and arguments; "" where saving failed
  std::set<std::string> shared;              // those kept for other processes (shared_dir)

 private:
  pid_t owner_ = ::getpid();
};

PrecompiledFiles& precompiled_files() {
  static PrecompiledFiles files;
  return files;
}

// libclang's parse of `header` alone, saved to `path`.
bool save_header(const std::string& header, const std::vector<std::string>& args, std::vector<CXUnsavedFile> files,
                 const std::string& path) {
  const std::string main = std::string(kShimDir) + "/mtlgen_precompiled.h";
  files.push_back({main.c_str(), header.data(), static_cast<unsigned long>(header.size())});
  std::vector<std::string> argv = {"-x", "c++-header"};
  argv.insert(argv.end(), args.begin(), args.end());
  ClangSession session;
  const unsigned flags = CXTranslationUnit_ForSerialization | CXTranslationUnit_Incomplete;
  return session.parse(main, argv, files, flags) == CXError_Success && session.tu &&
         clang_saveTranslationUnit(session.tu, path.c_str(), 0) == CXSaveError_None;
}

// Whether libclang takes `pch` for a parse with `args`: one kept from another process is refused
// where a file it read has changed since (a system header after an upgrade). An empty file is parsed
// with it, once per process.
bool loads(const std::string& pch, const std::vector<std::string>& args, std::vector<CXUnsavedFile> files) {
  const std::string main = std::string(kShimDir) + "/mtlgen_probe.cpp";
  files.push_back({main.c_str(), "", 0});
  std::vector<std::string> argv = {"-x", "c++"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"-include-pch", pch});
  ClangSession session;
  return session.parse(main, argv, files, 0) == CXError_Success && !session.has_errors();
}

// Where precompiled headers are kept for every process: <$MTLGEN_CACHE_DIR>/libclang/, beside
// check's verdicts; none without it (each process then makes its own and removes it at its end).
std::optional<fs::path> shared_dir() {
  const char* dir = std::getenv("MTLGEN_CACHE_DIR");
  if (!dir || !*dir) return std::nullopt;
  return fs::path(dir) / "libclang";
}

// `header` precompiled in `dir`, named by everything it depends on: libclang's version, the header,
// the arguments and the files in memory it may read (the shim), so that a changed shim is another
// file. Written under a temporary name and renamed: processes that make it at once agree.
std::string shared_header(const fs::path& dir, const std::string& header, const std::vector<std::string>& args,
                          const std::vector<CXUnsavedFile>& files, std::string key) {
  key += str(clang_getClangVersion()) + "\n";
  for (const CXUnsavedFile& f : files) {
    if (std::string_view(f.Filename).rfind(kShimDir, 0) != 0) continue;  // the user's files are not in it
    key += std::string(f.Filename) + "\n" + support::hash_hex(std::string_view(f.Contents, f.Length)) + "\n";
  }
  const fs::path path = dir / (support::hash_hex(key) + ".pch");
  std::error_code ec;
  if (fs::exists(path, ec)) {
    if (loads(path.string(), args, files)) return path.string();
    fs::remove(path, ec);  // made again below
  }
  fs::create_directories(dir, ec);
  const fs::path tmp = fs::path(path) += fmt::format(".tmp.{}", ::getpid());
  if (!save_header(header, args, files, tmp.string())) {
    fs::remove(tmp, ec);
    return "";
  }
  fs::rename(tmp, path, ec);
  if (!ec) return path.string();
  fs::remove(tmp, ec);  // (clears `ec`: the rename's failure is what counts)
  return "";
}

}  // namespace

std::string precompiled_header(const std::string& header, const std::vector<std::string>& args,
                               const std::vector<CXUnsavedFile>& files) {
  std::string key = header + "\n";
  for (const auto& a : args) key += a + "\n";
  PrecompiledFiles& made = precompiled_files();
  std::lock_guard lock(made.mutex);
  auto [at, added] = made.paths.try_emplace(key);
  if (!added) return at->second;
  if (std::optional<fs::path> dir = shared_dir()) {
    at->second = shared_header(*dir, header, args, files, key);
    if (!at->second.empty()) made.shared.insert(at->second);
    return at->second;
  }
  std::error_code ec;
  const fs::path tmp = fs::temp_directory_path(ec);
  if (ec) return at->second;  // no precompiled header: each parse reads the header itself
  const fs::path path = tmp / fmt::format("mtlgen-{}-{}.pch", ::getpid(), support::hash_hex(key));
  if (save_header(header, args, files, path.string())) at->second = path.string();
  return at->second;
}

std::vector<std::string> with_precompiled_prelude(const std::vector<std::string>& args,
                                                  const std::vector<CXUnsavedFile>& files) {
  // The prelude's arguments: all but the `-x` language pair, include directories (only the user's
  // files use them) and the `-include` of the prelude itself.
  std::vector<std::string> shaping, rest;
  for (size_t i = 0; i < args.size(); ++i) {
    if ((args[i] == "-x" || args[i] == "-include") && i + 1 < args.size()) {
      if (args[i] == "-x") rest.insert(rest.end(), {args[i], args[i + 1]});
      ++i;
      continue;
    }
    const bool user_dir = args[i].rfind("-I", 0) == 0 && args[i] != "-I" + std::string(kShimDir);
    (user_dir ? rest : shaping).push_back(args[i]);
  }
  const std::string pch = precompiled_header(parse_prelude(), shaping, files);
  if (pch.empty()) return args;
  rest.insert(rest.end(), shaping.begin(), shaping.end());
  rest.insert(rest.end(), {"-include-pch", pch});
  return rest;
}

}  // namespace mtlgen::msl
