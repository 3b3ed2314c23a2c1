#include "support/output_set.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <set>
#include <sstream>
#include <cstring>
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

constexpr const char* kTempInfix = ".tmp.";

// `name.tmp.<pid>` -> pid; 0 when `name` is no temp file of ours.
pid_t temp_file_owner(const std::string& name) {
  size_t at = name.rfind(kTempInfix);
  if (at == std::string::npos || at == 0) return 0;
  std::string digits = name.substr(at + std::strlen(kTempInfix));
  if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return 0;
  return static_cast<pid_t>(std::stol(digits));
}

bool process_alive(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

// Refuses a path under `dir` that passes through a symbolic link: following one could write
// outside the output directory. `dir` itself may be a link; the user named it.
void refuse_links_below(const fs::path& dir, const fs::path& rel) {
  fs::path at = dir;
  for (const auto& part : rel) {
    at /= part;
    std::error_code ec;
    if (fs::is_symlink(fs::symlink_status(at, ec))) {
      throw fs::filesystem_error("refusing to write through a symbolic link inside the output directory", at,
                                 std::make_error_code(std::errc::too_many_symbolic_link_levels));
    }
  }
}

void write_temp(const fs::path& tmp, const std::string& content) {
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  out << content;
  out.flush();
  if (out) return;
  // Also where `ulimit -f` stops the write: SIGXFSZ is ignored (main), so the write fails instead.
  std::error_code ignored;
  fs::remove(tmp, ignored);
  throw fs::filesystem_error("cannot write", tmp, std::make_error_code(std::errc::io_error));
}

}  // namespace

std::optional<std::string> read_file(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) return std::nullopt;
  return text.str();
}

bool has_content(const fs::path& path, const std::string& content) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec) || fs::file_size(path, ec) != content.size()) return false;
  return read_file(path) == content;
}

bool write_file_atomically(const fs::path& path, const std::string& content) {
  std::error_code ec;
  if (fs::is_directory(fs::symlink_status(path, ec))) {
    throw fs::filesystem_error("a directory is in the way of a generated file", path,
                               std::make_error_code(std::errc::is_a_directory));
  }
  if (fs::exists(fs::symlink_status(path, ec)) && !fs::is_regular_file(fs::symlink_status(path, ec)) &&
      !fs::is_symlink(fs::symlink_status(path, ec))) {
    throw fs::filesystem_error("refusing to replace something that is not a regular file", path,
                               std::make_error_code(std::errc::invalid_argument));
  }
  if (has_content(path, content)) return false;
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  fs::path tmp = path;
  tmp += kTempInfix + std::to_string(::getpid());
  write_temp(tmp, content);
  fs::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw fs::filesystem_error("cannot rename the temporary file into place", tmp, path, ec);
  }
  return true;
}

void remove_stale_temp_files(const fs::path& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    pid_t owner = temp_file_owner(entry.path().filename().string());
    if (owner <= 0 || owner == ::getpid() || process_alive(owner)) continue;
    if (!entry.is_regular_file(ec) || entry.is_symlink(ec)) continue;
    std::error_code ignored;
    fs::remove(entry.path(), ignored);
  }
}

WriteStats write_outputs(const OutputSet& outputs, const fs::path& dir) {
  WriteStats stats;
  std::set<fs::path> cleaned;
  for (const auto& [rel, content] : outputs.files()) {
    fs::path path = dir / rel;
    refuse_links_below(dir, fs::path(rel));
    // A killed run (kill -9) leaves `name.tmp.<pid>` behind; the next run removes it.
    if (fs::path parent = path.parent_path(); cleaned.insert(parent).second) remove_stale_temp_files(parent);
    if (write_file_atomically(path, content)) {
      ++stats.written;
    } else {
      ++stats.unchanged;
    }
  }
  return stats;
}

}  // namespace mtlgen::support
