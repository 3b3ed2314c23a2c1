#include "support/tool_identity.h"

#include <sys/stat.h>

#include <fmt/format.h>

#include "support/sources_hash.h"
#include "support/version.h"

namespace mtlgen::support {

std::string tool_identity() {
  struct stat s {};
  if (::stat("/proc/self/exe", &s) != 0) return fmt::format("mtlgen {} (unknown build)", kVersion);
  return fmt::format("mtlgen {} {} {}.{} {}", kVersion, s.st_size, s.st_mtim.tv_sec, s.st_mtim.tv_nsec, s.st_ino);
}

std::string sources_identity() { return fmt::format("mtlgen {} sources {}", kVersion, kMtlgenSourcesHash); }

}  // namespace mtlgen::support
