#pragma once
// Content hashes for cache keys and for recording which spec text produced an artifact.
// FNV-1a, 64-bit: identification, not security.
#include <cstdint>
#include <string>
#include <string_view>

namespace mtlgen::support {

uint64_t fnv1a64(std::string_view bytes, uint64_t seed = 0xcbf29ce484222325ull);
std::string hash_hex(std::string_view bytes);  // 16 lowercase hex digits
// 32 lowercase hex digits: the hash of `bytes`, then of `bytes` and one more byte, for cache keys
// of stores with so many entries that 64 bits could collide.
std::string wide_hash_hex(std::string_view bytes);

}  // namespace mtlgen::support
