// The drawing half of harness_inputs_driver.cpp: the harness's fill code (support/mtlgen_testdata.h)
// in a translation unit of its own, compiled at -O2 with the flags under test (fused multiply-add
// allowed), while the driver's case tables, which only hold data, compile at -O0: they were most of
// the build's time. Linked first, so that its copies of the header's inline functions are the ones
// the program runs.
#include <cstdint>
#include <vector>

#include "support/mtlgen_testdata.h"

static uint64_t fnv1a64(const std::vector<uint8_t>& bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t b : bytes) h = (h ^ b) * 0x100000001b3ull;
  return h;
}

// The size and FNV-1a 64 hash of the bytes the harness uploads for `b` in a case seeded `seed`.
void harness_inputs_draw(const mtlgen::testdata::Buffer& b, uint64_t seed, uint64_t& size, uint64_t& hash) {
  const std::vector<uint8_t> bytes = mtlgen::testdata::initial_contents(b, seed);
  size = bytes.size();
  hash = fnv1a64(bytes);
}
