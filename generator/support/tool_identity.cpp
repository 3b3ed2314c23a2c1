#include "support/tool_identity.h"

#include <sys/stat.h>

#include <fmt/format.h>

#include "support/version.h"

namespace mtlgen::support {

std::string tool_identity() {
  struct stat s {};
  if (::stat("/proc/self/exe", &s) != 0) return fmt::format("mtlgen {} (unknown build)", kVersion);
  return fmt::format("mtlgen {} {} {}.{} {}", kVersion, s.st_size, s.st_mtim.tv_sec, s.st_mtim.tv_nsec, s.st_ino);
}

}  // namespace mtlgen::support
