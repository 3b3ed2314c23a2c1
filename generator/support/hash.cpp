#include "support/hash.h"

#include <fmt/format.h>

namespace mtlgen::support {

uint64_t fnv1a64(std::string_view bytes, uint64_t seed) {
  uint64_t h = seed;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string hash_hex(std::string_view bytes) { return fmt::format("{:016x}", fnv1a64(bytes)); }

std::string wide_hash_hex(std::string_view bytes) {
  const uint64_t first = fnv1a64(bytes);
  return fmt::format("{:016x}{:016x}", first, fnv1a64("\x01", first));
}

}  // namespace mtlgen::support
