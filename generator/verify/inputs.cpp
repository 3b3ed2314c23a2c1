#include "verify/inputs.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>

#include "support/hash.h"
#include "verify/elements.h"

namespace mtlgen::verify {

namespace {

double draw(const ir::InputFill& f, std::mt19937_64& rng, size_t index) {
  switch (f.dist) {
    case ir::Distribution::normal: return std::normal_distribution<double>(f.a, f.b)(rng);
    case ir::Distribution::uniform: return std::uniform_real_distribution<double>(f.a, f.b)(rng);
    case ir::Distribution::constant: return f.a;
    case ir::Distribution::iota: return f.a + f.b * static_cast<double>(index);
    case ir::Distribution::bits: return 0;  // drawn by fill_bits
    case ir::Distribution::choice:
      if (f.values.empty()) return 0;
      return f.values[std::uniform_int_distribution<size_t>(0, f.values.size() - 1)(rng)];
  }
  return 0;
}

// Replaces a share of elements by NaN / +inf / -inf, drawn independently of the values.
double special(const ir::InputFill& f, std::mt19937_64& rng, double value) {
  if (f.nan_fraction <= 0 && f.inf_fraction <= 0 && f.neg_inf_fraction <= 0) return value;
  double u = std::uniform_real_distribution<double>(0, 1)(rng);
  if (u < f.nan_fraction) return std::numeric_limits<double>::quiet_NaN();
  u -= f.nan_fraction;
  if (u < f.inf_fraction) return std::numeric_limits<double>::infinity();
  u -= f.inf_fraction;
  if (u < f.neg_inf_fraction) return -std::numeric_limits<double>::infinity();
  return value;
}

// Every bit of each element drawn at random (packed formats: every pattern is fair game).
void fill_bits(ir::ScalarType type, void* data, size_t elements, std::mt19937_64& rng) {
  auto* bytes = static_cast<unsigned char*>(data);
  for (size_t i = 0; i < elements * ir::info(type).size; ++i) bytes[i] = static_cast<unsigned char>(rng() & 0xff);
}

// `elements` values of `type`, `stride` bytes apart from `data` (a field of consecutive blocks);
// index i of the fill is element i of that sequence.
void fill_values(const ir::InputFill& fill, ir::ScalarType type, char* data, size_t count, size_t elements,
                 size_t stride, uint64_t seed) {
  std::mt19937_64 values(seed), specials(seed ^ 0x9e3779b97f4a7c15ull);
  const size_t size = ir::info(type).size;
  auto at = [&](size_t i) { return data + (i / count) * stride + (i % count) * size; };
  for (size_t i = 0; i < elements; ++i) {
    if (fill.dist == ir::Distribution::bits) {
      fill_bits(type, at(i), 1, values);
      continue;
    }
    store_element(type, at(i), 0, special(fill, specials, draw(fill, values, i)));
  }
  for (const auto& [index, value] : fill.set) {
    if (index < 0 || static_cast<size_t>(index) >= elements) {
      throw std::invalid_argument(fmt::format("input `set:` index {} is outside the {} elements it fills", index, elements));
    }
    store_element(type, at(static_cast<size_t>(index)), 0, value);
  }
}

}  // namespace

void fill_input(const ir::InputFill& fill, ir::ScalarType type, void* data, size_t elements, uint64_t seed,
                const ir::BlockLayout* block) {
  if (!block) {
    fill_values(fill, type, static_cast<char*>(data), 1, elements, ir::info(type).size, seed);
    return;
  }
  size_t bytes = elements * ir::info(type).size;
  if (bytes % block->size != 0) {
    throw std::invalid_argument(fmt::format("a buffer of {} bytes is not a whole number of `{}` blocks ({} bytes each)",
                                            bytes, block->name, block->size));
  }
  size_t blocks = bytes / block->size;
  std::memset(data, 0, bytes);  // padding
  for (const auto& given : fill.fields) {
    const ir::BlockField* f = block->field(given.field);
    if (!f) continue;
    size_t count = static_cast<size_t>(f->count);
    fill_values(given.fill, f->type, static_cast<char*>(data) + f->offset, count, blocks * count, block->size,
                buffer_seed(seed, f->name));
  }
}



uint64_t buffer_seed(uint64_t case_seed, const std::string& buffer) {
  return support::fnv1a64(buffer, case_seed * 0x100000001b3ull + 0xcbf29ce484222325ull);
}

}  // namespace mtlgen::verify
