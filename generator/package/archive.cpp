#include "package/archive.h"

#include <archive.h>
#include <archive_entry.h>

#include <memory>
#include <stdexcept>
#include <vector>

namespace mtlgen::package {

namespace {

struct Entry {
  std::string path;
  const std::string* content = nullptr;  // null: a directory
  bool executable = false;
};

// Every directory of `files` (with its parents) and every file, sorted by path; "a/" sorts
// before "a/b", so a directory precedes what it holds.
std::vector<Entry> entries(const std::string& root, const std::map<std::string, std::string>& files,
                           const std::set<std::string>& executables) {
  std::map<std::string, Entry> sorted;
  sorted[root + "/"] = {root + "/", nullptr, false};
  for (const auto& [path, content] : files) {
    std::string full = root + "/" + path;
    for (size_t slash = full.find('/', root.size() + 1); slash != std::string::npos; slash = full.find('/', slash + 1)) {
      std::string dir = full.substr(0, slash + 1);
      sorted[dir] = {dir, nullptr, false};
    }
    sorted[full] = {full, &content, executables.count(path) > 0};
  }
  std::vector<Entry> out;
  for (auto& [path, e] : sorted) out.push_back(e);
  return out;
}

la_ssize_t append(struct archive*, void* data, const void* buffer, size_t length) {
  static_cast<std::string*>(data)->append(static_cast<const char*>(buffer), length);
  return static_cast<la_ssize_t>(length);
}

void check(struct archive* a, int rc, const char* what) {
  if (rc != ARCHIVE_OK) {
    throw std::runtime_error(std::string("libarchive: ") + what + ": " +
                             (archive_error_string(a) ? archive_error_string(a) : "failed"));
  }
}

void write_entry(struct archive* a, const Entry& e) {
  std::unique_ptr<archive_entry, void (*)(archive_entry*)> entry(archive_entry_new(), archive_entry_free);
  archive_entry_set_pathname(entry.get(), e.path.c_str());
  archive_entry_set_filetype(entry.get(), e.content ? AE_IFREG : AE_IFDIR);
  archive_entry_set_perm(entry.get(), e.content && !e.executable ? 0644 : 0755);
  archive_entry_set_size(entry.get(), e.content ? static_cast<la_int64_t>(e.content->size()) : 0);
  archive_entry_set_mtime(entry.get(), 0, 0);
  archive_entry_set_uid(entry.get(), 0);
  archive_entry_set_gid(entry.get(), 0);
  check(a, archive_write_header(a, entry.get()), "write header");
  if (e.content && !e.content->empty() &&
      archive_write_data(a, e.content->data(), e.content->size()) != static_cast<la_ssize_t>(e.content->size())) {
    check(a, ARCHIVE_FATAL, "write data");
  }
}

}  // namespace

std::string deterministic_tar_gz(const std::string& root, const std::map<std::string, std::string>& files,
                                 const std::set<std::string>& executables) {
  std::string bytes;
  std::unique_ptr<struct archive, int (*)(struct archive*)> a(archive_write_new(), archive_write_free);
  check(a.get(), archive_write_set_format_ustar(a.get()), "ustar");
  check(a.get(), archive_write_add_filter_gzip(a.get()), "gzip");
  // "!timestamp": no mtime in the gzip header (libarchive writes the current time otherwise).
  check(a.get(), archive_write_set_filter_option(a.get(), "gzip", "timestamp", nullptr), "gzip timestamp");
  check(a.get(), archive_write_set_bytes_in_last_block(a.get(), 1), "last block");
  check(a.get(), archive_write_open(a.get(), &bytes, nullptr, append, nullptr), "open");
  for (const auto& e : entries(root, files, executables)) write_entry(a.get(), e);
  check(a.get(), archive_write_close(a.get()), "close");
  return bytes;
}

}  // namespace mtlgen::package
