// Headers precompiled by libclang. Every MSL parse starts with the shim's <metal_stdlib>
// (parse_prelude), and every check of a C++ reference with the standard library: most of a small
// kernel's parse (0.6 of 0.65 s with clang 14). Each is saved once per process and set of arguments,
// and each parse loads it with -include-pch.
#include <unistd.h>

#include <filesystem>
#include <map>
#include <mutex>

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
    for (const auto& [key, path] : paths) fs::remove(path, ignored);
  }
  std::mutex mutex;
  std::map<std::string, std::string> paths;  // by arguments; "" where saving failed

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
  std::vector<const char*> argv = {"-x", "c++-header"};
  for (const auto& a : args) argv.push_back(a.c_str());
  CXIndex index = clang_createIndex(1, 0);
  CXTranslationUnit tu = nullptr;
  const unsigned flags = CXTranslationUnit_ForSerialization | CXTranslationUnit_Incomplete;
  CXErrorCode status = clang_parseTranslationUnit2(index, main.c_str(), argv.data(), static_cast<int>(argv.size()),
                                                   files.data(), static_cast<unsigned>(files.size()), flags, &tu);
  bool saved = status == CXError_Success && tu && clang_saveTranslationUnit(tu, path.c_str(), 0) == CXSaveError_None;
  if (tu) clang_disposeTranslationUnit(tu);
  clang_disposeIndex(index);
  return saved;
}

}  // namespace

std::string precompiled_header(const std::string& header, const std::vector<std::string>& args,
                               const std::vector<CXUnsavedFile>& files) {
  std::string key = header + "\n";
  for (const auto& a : args) key += a + "\n";
  PrecompiledFiles& made = precompiled_files();
  std::lock_guard lock(made.mutex);
  auto [at, added] = made.paths.try_emplace(key);
  if (added) {
    const fs::path path = fs::temp_directory_path() / fmt::format("mtlgen-{}-{}.pch", ::getpid(), support::hash_hex(key));
    if (save_header(header, args, files, path.string())) at->second = path.string();
  }
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
