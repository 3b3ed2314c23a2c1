#include "verify/elements.h"

#include <cmath>
#include <cstring>

#include "mtlgen_numeric.h"

namespace mtlgen::verify {

namespace {

template <typename T>
T read_as(const void* base, size_t index) {
  T v;
  std::memcpy(&v, static_cast<const char*>(base) + index * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
void write_as(void* base, size_t index, T v) {
  std::memcpy(static_cast<char*>(base) + index * sizeof(T), &v, sizeof(T));
}

// Saturating, NaN-to-zero conversion for integer element types (inputs come from real-valued fills).
template <typename T>
T to_int(double v) {
  if (std::isnan(v)) return T(0);
  double lo = double(std::numeric_limits<T>::lowest()), hi = double(std::numeric_limits<T>::max());
  return T(std::llround(std::fmin(std::fmax(v, lo), hi)));
}

}  // namespace

double load_element(ir::ScalarType type, const void* base, size_t i) {
  switch (type) {
    case ir::ScalarType::f32: return read_as<float>(base, i);
    case ir::ScalarType::f16: return float(half::from_bits(read_as<uint16_t>(base, i)));
    case ir::ScalarType::bf16: return float(bfloat::from_bits(read_as<uint16_t>(base, i)));
    case ir::ScalarType::i8: return read_as<int8_t>(base, i);
    case ir::ScalarType::i16: return read_as<int16_t>(base, i);
    case ir::ScalarType::i32: return read_as<int32_t>(base, i);
    case ir::ScalarType::u8:
    case ir::ScalarType::bytes:
    case ir::ScalarType::boolean: return read_as<uint8_t>(base, i);
    case ir::ScalarType::u16: return read_as<uint16_t>(base, i);
    case ir::ScalarType::u32: return read_as<uint32_t>(base, i);
  }
  return 0;
}

void store_element(ir::ScalarType type, void* base, size_t i, double v) {
  switch (type) {
    case ir::ScalarType::f32: write_as<float>(base, i, float(v)); break;
    case ir::ScalarType::f16: write_as<uint16_t>(base, i, half(float(v)).bits()); break;
    case ir::ScalarType::bf16: write_as<uint16_t>(base, i, bfloat(float(v)).bits()); break;
    case ir::ScalarType::i8: write_as(base, i, to_int<int8_t>(v)); break;
    case ir::ScalarType::i16: write_as(base, i, to_int<int16_t>(v)); break;
    case ir::ScalarType::i32: write_as(base, i, to_int<int32_t>(v)); break;
    case ir::ScalarType::u8:
    case ir::ScalarType::bytes:
    case ir::ScalarType::boolean: write_as(base, i, to_int<uint8_t>(v)); break;
    case ir::ScalarType::u16: write_as(base, i, to_int<uint16_t>(v)); break;
    case ir::ScalarType::u32: write_as(base, i, to_int<uint32_t>(v)); break;
  }
}

std::vector<uint8_t> output_poison(ir::ScalarType type, int which) {
  auto bytes_of = [](auto bits) {
    std::vector<uint8_t> out(sizeof bits);
    std::memcpy(out.data(), &bits, sizeof bits);
    return out;
  };
  switch (type) {
    case ir::ScalarType::f32: return bytes_of(which ? uint32_t{0x7FC2BAD2} : uint32_t{0x7FC1BAD1});
    case ir::ScalarType::f16: return bytes_of(which ? uint16_t{0x7E22} : uint16_t{0x7E11});
    case ir::ScalarType::bf16: return bytes_of(which ? uint16_t{0x7FC2} : uint16_t{0x7FC1});
    default: return std::vector<uint8_t>(ir::info(type).size, which ? 0x5A : 0xA5);
  }
}

bool equals_pattern(const void* element, const std::vector<uint8_t>& pattern) {
  return std::memcmp(element, pattern.data(), pattern.size()) == 0;
}

}  // namespace mtlgen::verify
