#pragma once
// Emitters never touch the filesystem: they add files to an OutputSet held in memory. The driver
// writes the set once no error was reported, atomically (temp file + rename), skipping files
// whose bytes are already on disk.
#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace mtlgen::support {

class OutputSet {
 public:
  // `path` is relative, '/'-separated, with no '..' or absolute component; violating that is a
  // programming error (std::logic_error), never something user input can reach.
  void add(const std::string& path, std::string content);
  const std::map<std::string, std::string>& files() const { return files_; }

 private:
  std::map<std::string, std::string> files_;
};

struct WriteStats {
  int written = 0;
  int unchanged = 0;
};

// Throws std::filesystem::filesystem_error on I/O failure and where writing would pass through a
// symbolic link below `dir`; files already renamed stay valid. Removes `*.tmp.<pid>` files that
// runs killed before their rename left in the directories it writes, where that pid is not alive.
WriteStats write_outputs(const OutputSet& outputs, const std::filesystem::path& dir);

// Removes `<name>.tmp.<pid>` regular files in `dir` whose pid is not a live process.
void remove_stale_temp_files(const std::filesystem::path& dir);

// The bytes of a regular file; nullopt where there is none or it cannot be read.
std::optional<std::string> read_file(const std::filesystem::path& path);

// Whether `path` is a regular file holding exactly `content` (how unchanged files are skipped).
bool has_content(const std::filesystem::path& path, const std::string& content);

// Atomic write of one file (temp file in the same directory + rename); no-op when unchanged.
// A directory or other non-regular file in the way is an error, with no temp file left.
// Returns true when the file was written.
bool write_file_atomically(const std::filesystem::path& path, const std::string& content);

}  // namespace mtlgen::support
