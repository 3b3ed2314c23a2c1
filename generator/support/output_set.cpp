#include "support/output_set.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace mtlgen::support {

namespace fs = std::filesystem;

void OutputSet::add(const std::string& path, std::string content) {
  fs::path p(path);
  bool escapes = p.is_absolute() || path.empty();
  for (const auto& part : p) escapes = escapes || part == "..";
  if (escapes) throw std::logic_error("output path must stay inside the output directory: " + path);
  if (files_.count(path)) throw std::logic_error("output file emitted twice: " + path);
  files_.emplace(path, std::move(content));
}

namespace {

bool same_content(const fs::path& path, const std::string& content) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec) || fs::file_size(path, ec) != content.size()) return false;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream existing;
  existing << in.rdbuf();
  return existing.str() == content;
}

}  // namespace

bool write_file_atomically(const fs::path& path, const std::string& content) {
  if (same_content(path, content)) return false;
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  fs::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << content;
    out.flush();
    if (!out) {
      std::error_code ignored;
      fs::remove(tmp, ignored);
      throw fs::filesystem_error("cannot write", tmp, std::make_error_code(std::errc::io_error));
    }
  }
  fs::rename(tmp, path);
  return true;
}

WriteStats write_outputs(const OutputSet& outputs, const fs::path& dir) {
  WriteStats stats;
  for (const auto& [rel, content] : outputs.files()) {
    if (write_file_atomically(dir / rel, content)) {
      ++stats.written;
    } else {
      ++stats.unchanged;
    }
  }
  return stats;
}

}  // namespace mtlgen::support
