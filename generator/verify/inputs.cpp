#include "verify/inputs.h"

#include <fmt/format.h>

#include <cmath>
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

}  // namespace

void fill_input(const ir::InputFill& fill, ir::ScalarType type, void* data, size_t elements, uint64_t seed) {
  std::mt19937_64 values(seed), specials(seed ^ 0x9e3779b97f4a7c15ull);
  bool bytes = type == ir::ScalarType::bytes;  // packed formats: every bit pattern is fair game
  for (size_t i = 0; i < elements; ++i) {
    double v = bytes && fill.dist == ir::Distribution::normal ? double(values() & 0xff) : draw(fill, values, i);
    store_element(type, data, i, special(fill, specials, v));
  }
  for (const auto& [index, value] : fill.set) {
    if (index < 0 || static_cast<size_t>(index) >= elements) {
      throw std::invalid_argument(fmt::format("input `set:` index {} is outside the buffer's {} elements", index, elements));
    }
    store_element(type, data, static_cast<size_t>(index), value);
  }
}

uint64_t buffer_seed(uint64_t case_seed, const std::string& buffer) {
  return support::fnv1a64(buffer, case_seed * 0x100000001b3ull + 0xcbf29ce484222325ull);
}

}  // namespace mtlgen::verify
