#pragma once
// Emitters never touch the filesystem: they add files to an OutputSet held in memory. The driver
// writes the set once no error was reported, atomically (temp file + rename), skipping files
// whose bytes are already on disk.
#include <filesystem>
#include <map>
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

// Throws std::filesystem::filesystem_error on I/O failure; files already renamed stay valid.
WriteStats write_outputs(const OutputSet& outputs, const std::filesystem::path& dir);

// Atomic write of one file (temp file in the same directory + rename); no-op when unchanged.
// Returns true when the file was written.
bool write_file_atomically(const std::filesystem::path& path, const std::string& content);

}  // namespace mtlgen::support
