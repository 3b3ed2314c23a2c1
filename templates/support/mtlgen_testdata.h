// Test inputs and the tolerance judge shared by `mtlgen verify`, the C++ reference tests and the
// Mac bench/autotune programs: the same spec, case and seed give the same bytes on every platform
// and standard library. Header-only C++17, no Objective-C.
//
// Why not <random> or libm: std:: distributions are unspecified (libstdc++ and libc++ draw
// different numbers), and log/exp/sin/cos may differ in the last bit between glibc and Apple's
// libm. Everything below uses integer arithmetic and IEEE-754 double + - * / and sqrt, which are
// correctly rounded everywhere, with floating-point contraction (a*b+c fused into an fma, which
// Apple clang does by default) turned off.
//
// The generator (its numbers differ from those of earlier mtlgen versions, which drew with
// std::mt19937_64 and std:: distributions):
// - RNG: xoshiro256** 1.0 (Blackman and Vigna), its four state words the first four outputs of
//   SplitMix64 started at the stream's seed.
// - Seeds: a buffer's seed is FNV-1a 64 of its name's bytes with the offset basis XORed with the
//   case's seed (the case's `seed:`, else `tests.seed`); a block field's seed is the same hash of
//   the field's name over its buffer's seed. Each seed drives two streams: values from the seed,
//   NaN/inf shares from seed ^ kSpecialsSeedMix.
// - u = (next() >> 11) * 2^-53, in [0, 1).
// - uniform(min, max): min + (max - min) * u.
// - normal(mean, std): Marsaglia's polar method: x = 2u1 - 1, y = 2u2 - 1, s = x² + y², redrawn
//   until 0 < s < 1; z = x * sqrt(-2 ln(s) / s) (y's partner is dropped); mean + std * z. ln is
//   computed here: s = m·2^e with m in [√½, √2), ln s = e·ln2 + 2·atanh((m-1)/(m+1)) by its series.
// - choice(values): values[k] with k = next() mod n, redrawn while next() < 2^64 mod n (unbiased).
// - iota(start, step): start + step * i.  constant(value): value.
// - bits: one next() per element, its low (element size) bytes, least significant byte first.
// - specials: when a share is > 0, each element draws u from the specials stream: u < nan is NaN,
//   else u < nan + inf is +inf, else u < nan + inf + -inf is -inf.
// - set: index -> value, stored last.
// - storing: float rounds the double to nearest; half and bfloat round the double to float, then
//   to nearest even; integers round half away from zero (NaN is 0; values outside the type, which
//   the spec validator rejects for every fill but a normal's far tail, saturate).
// - blocks: the buffer is zeroed (padding), then each field in layout order fills its elements
//   across all blocks, element i of the field at block i / count, slot i % count.
// The judge: an element passes when both are NaN, or both are the same infinity, or (exact) equal,
// or |got - want| <= max_abs, or |got - want| <= max_rel * |want|, or |got - want| <= peak_rel * the
// largest finite |want| of the buffer (a bound relative to the output's scale, for gradients); with
// none of these bounds it is judged by nmse alone. nmse = sum(diff²) / sum(want²) over finite pairs
// (sum(diff²) when sum(want²) = 0).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "mtlgen_host.h"
#include "mtlgen_numeric.h"

#ifdef __FAST_MATH__
#error "mtlgen_testdata.h needs IEEE arithmetic: compile without -ffast-math"
#endif

// a*b+c must round twice on every compiler; clang and GCC fuse it when they may.
#if defined(__clang__)
#pragma float_control(push)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#endif

namespace mtlgen::testdata {

// --- The generator -------------------------------------------------------------------------------

inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// xoshiro256** 1.0.
class Xoshiro256 {
 public:
  explicit Xoshiro256(uint64_t seed) {
    for (uint64_t& word : s_) word = splitmix64(seed);
  }

  // A given state (the published test vectors start from one).
  static Xoshiro256 from_state(uint64_t s0, uint64_t s1, uint64_t s2, uint64_t s3) {
    Xoshiro256 rng(0);
    rng.s_[0] = s0, rng.s_[1] = s1, rng.s_[2] = s2, rng.s_[3] = s3;
    return rng;
  }

  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // [0, 1) in steps of 2^-53.
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // [0, n), unbiased.
  uint64_t below(uint64_t n) {
    const uint64_t threshold = (0 - n) % n;
    uint64_t x = next();
    while (x < threshold) x = next();
    return x % n;
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

inline constexpr uint64_t kSpecialsSeedMix = 0x5370656369616c73ull;  // "Specials"

// FNV-1a 64 of `name` with the offset basis XORed with `seed`.
inline uint64_t buffer_seed(uint64_t seed, const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ull ^ seed;
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// ln(x) for a positive normal x, from + - * / only (see the top of the file).
inline double log_of(double x) {
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  int exponent = static_cast<int>((bits >> 52) & 0x7ff) - 1023;
  bits = (bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull;  // mantissa in [1, 2)
  double m;
  std::memcpy(&m, &bits, sizeof m);
  if (m > 1.4142135623730951) {
    m /= 2;
    ++exponent;
  }
  const double t = (m - 1) / (m + 1), t2 = t * t;  // |t| < 0.1716: 20 terms reach 1e-31
  double series = 0;
  for (int k = 19; k >= 0; --k) series = series * t2 + 1.0 / (2 * k + 1);
  return exponent * 0.6931471805599453 + 2 * t * series;
}

inline double standard_normal(Xoshiro256& rng) {
  double x, y, s;
  do {
    x = 2 * rng.unit() - 1;
    y = 2 * rng.unit() - 1;
    s = x * x + y * y;
  } while (s >= 1 || s == 0);
  return x * __builtin_sqrt(-2 * log_of(s) / s);
}

// --- Fills ---------------------------------------------------------------------------------------

enum class Dist { normal, uniform, constant, choice, iota, bits };

struct FieldFill;

// A spec's input distribution (tests.inputs); a buffer of blocks fills per field instead.
struct Fill {
  Dist dist = Dist::normal;
  double a = 0;                           // normal: mean; uniform: min; constant: value; iota: start
  double b = 1;                           // normal: std; uniform: max; iota: step
  std::vector<double> values;             // choice
  double nan = 0, inf = 0, neg_inf = 0;   // shares of elements replaced by NaN, +inf, -inf
  std::map<int64_t, double> set;          // elements given exactly, stored last
  std::vector<FieldFill> fields;          // a buffer of blocks: every field's fill
};

struct FieldFill {
  std::string field;
  Fill fill;
};

// One field of a block layout (`qs: int8[32]`), laid out as Metal lays out the struct.
struct BlockField {
  std::string name;
  DType type = DType::u8;
  uint64_t count = 1;
  uint64_t offset = 0;
};

struct BlockLayout {
  std::string name;
  uint64_t size = 0;
  std::vector<BlockField> fields;
};

inline bool is_nan(double v) { return v != v; }
inline bool is_inf(double v) { return v == std::numeric_limits<double>::infinity() || v == -std::numeric_limits<double>::infinity(); }
inline double magnitude(double v) { return v < 0 ? -v : v; }

// Round half away from zero into [lo, hi]; NaN is 0.
inline int64_t round_to_integer(double v, double lo, double hi) {
  if (is_nan(v)) return 0;
  if (v <= lo) return static_cast<int64_t>(lo);
  if (v >= hi) return static_cast<int64_t>(hi);
  const int64_t whole = static_cast<int64_t>(v);
  const double rest = v - static_cast<double>(whole);  // exact
  return whole + (rest >= 0.5 ? 1 : rest <= -0.5 ? -1 : 0);
}

template <typename T>
void put(void* base, uint64_t i, T value) {
  std::memcpy(static_cast<char*>(base) + i * sizeof(T), &value, sizeof(T));
}

template <typename T>
T get(const void* base, uint64_t i) {
  T value;
  std::memcpy(&value, static_cast<const char*>(base) + i * sizeof(T), sizeof(T));
  return value;
}

template <typename T>
void put_integer(void* base, uint64_t i, double v) {
  const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
  const double hi = static_cast<double>(std::numeric_limits<T>::max());
  put(base, i, static_cast<T>(round_to_integer(v, lo, hi)));
}

// Element i of a buffer of `type` set to `v`, rounded as the top of the file says.
inline void store_value(DType type, void* base, uint64_t i, double v) {
  switch (type) {
    case DType::f32: return put(base, i, static_cast<float>(v));
    case DType::f16: return put(base, i, detail::float_to_half_bits(static_cast<float>(v)));
    case DType::bf16: return put(base, i, detail::float_to_bfloat_bits(static_cast<float>(v)));
    case DType::i8: return put_integer<int8_t>(base, i, v);
    case DType::i16: return put_integer<int16_t>(base, i, v);
    case DType::i32: return put_integer<int32_t>(base, i, v);
    case DType::u8: return put_integer<uint8_t>(base, i, v);
    case DType::u16: return put_integer<uint16_t>(base, i, v);
    case DType::u32: return put_integer<uint32_t>(base, i, v);
  }
}

inline double load_value(DType type, const void* base, uint64_t i) {
  switch (type) {
    case DType::f32: return get<float>(base, i);
    case DType::f16: return detail::half_bits_to_float(get<uint16_t>(base, i));
    case DType::bf16: return detail::bfloat_bits_to_float(get<uint16_t>(base, i));
    case DType::i8: return get<int8_t>(base, i);
    case DType::i16: return get<int16_t>(base, i);
    case DType::i32: return get<int32_t>(base, i);
    case DType::u8: return get<uint8_t>(base, i);
    case DType::u16: return get<uint16_t>(base, i);
    case DType::u32: return get<uint32_t>(base, i);
  }
  return 0;
}

inline double draw(const Fill& f, Xoshiro256& rng, uint64_t index) {
  switch (f.dist) {
    case Dist::normal: return f.a + f.b * standard_normal(rng);
    case Dist::uniform: return f.a + (f.b - f.a) * rng.unit();
    case Dist::constant: return f.a;
    case Dist::iota: return f.a + f.b * static_cast<double>(index);
    case Dist::choice: return f.values.empty() ? 0 : f.values[rng.below(f.values.size())];
    case Dist::bits: return 0;  // drawn by put_bits
  }
  return 0;
}

// `value`, or NaN / +inf / -inf by the fill's shares.
inline double special(const Fill& f, Xoshiro256& rng, double value) {
  if (f.nan <= 0 && f.inf <= 0 && f.neg_inf <= 0) return value;
  const double u = rng.unit();
  if (u < f.nan) return std::numeric_limits<double>::quiet_NaN();
  if (u < f.nan + f.inf) return std::numeric_limits<double>::infinity();
  if (u < f.nan + f.inf + f.neg_inf) return -std::numeric_limits<double>::infinity();
  return value;
}

inline void put_bits(unsigned char* at, int size, uint64_t bits) {
  for (int byte = 0; byte < size; ++byte) at[byte] = static_cast<unsigned char>(bits >> (8 * byte));
}

// `elements` values of `type`, `stride` bytes apart per group of `count` (a block field), from `seed`.
inline void fill_strided(const Fill& f, DType type, unsigned char* data, uint64_t count, uint64_t elements,
                         uint64_t stride, uint64_t seed) {
  Xoshiro256 values(seed), specials(seed ^ kSpecialsSeedMix);
  const int size = dtype_size(type);
  auto at = [&](uint64_t i) { return data + (i / count) * stride + (i % count) * static_cast<uint64_t>(size); };
  for (uint64_t i = 0; i < elements; ++i) {
    if (f.dist == Dist::bits) put_bits(at(i), size, values.next());
    else store_value(type, at(i), 0, special(f, specials, draw(f, values, i)));
  }
  for (const auto& [index, value] : f.set) {
    if (index < 0 || static_cast<uint64_t>(index) >= elements) {
      throw std::invalid_argument("input `set:` index " + std::to_string(index) + " is outside the " +
                                  std::to_string(elements) + " elements it fills");
    }
    store_value(type, at(static_cast<uint64_t>(index)), 0, value);
  }
}

// `elements` values of `type` at `data`, drawn from the stream of `seed` (a buffer_seed).
inline void fill_elements(const Fill& f, DType type, void* data, uint64_t elements, uint64_t seed) {
  fill_strided(f, type, static_cast<unsigned char*>(data), 1, elements, static_cast<uint64_t>(dtype_size(type)), seed);
}

// `bytes` bytes of consecutive blocks of `layout`, each field from its own fill in `f.fields`.
inline void fill_blocks(const Fill& f, const BlockLayout& layout, void* data, uint64_t bytes, uint64_t seed) {
  if (layout.size == 0 || bytes % layout.size != 0) {
    throw std::invalid_argument("a buffer of " + std::to_string(bytes) + " bytes is not a whole number of `" +
                                layout.name + "` blocks (" + std::to_string(layout.size) + " bytes each)");
  }
  const uint64_t blocks = bytes / layout.size;
  std::memset(data, 0, bytes);
  for (const BlockField& field : layout.fields) {
    for (const FieldFill& given : f.fields) {
      if (given.field != field.name) continue;
      fill_strided(given.fill, field.type, static_cast<unsigned char*>(data) + field.offset, field.count,
                   blocks * field.count, layout.size, buffer_seed(seed, field.name));
    }
  }
}

// --- Buffers and cases ---------------------------------------------------------------------------

// Dims (or scalars) by name.
using Values = std::map<std::string, int64_t>;

// One buffer of a kernel at given dims: inputs are drawn from `fill`, outputs start poisoned.
struct Buffer {
  std::string name;
  DType type = DType::u8;         // a packed (`bytes`) buffer is u8
  uint64_t elements = 0;
  bool input = true;              // the kernel reads it: filled from `fill`
  bool output = false;            // the kernel writes it: compared with the reference
  bool host_visible = true;
  Fill fill;
  std::optional<BlockLayout> block;  // a buffer of blocks: filled per field
};

// A spec test case: its dims, scalars, seed and the fill of every input buffer.
struct Case {
  std::string name;
  uint64_t seed = 1;
  Values dims;
  std::map<std::string, double> scalars;  // the ones the case sets
  std::map<std::string, Fill> inputs;     // by buffer: the case's own, else the spec's default
};

// A buffer's initial bytes in a case seeded `case_seed`: inputs drawn from their fill, outputs
// 0xFF (NaN, or the largest integer) so that an element never written cannot match.
inline std::vector<uint8_t> initial_contents(const Buffer& b, uint64_t case_seed) {
  const uint64_t bytes = b.elements * static_cast<uint64_t>(dtype_size(b.type));
  std::vector<uint8_t> data(bytes, 0xFF);
  if (!b.input) return data;
  const uint64_t seed = buffer_seed(case_seed, b.name);
  if (b.block) fill_blocks(b.fill, *b.block, data.data(), bytes, seed);
  else fill_elements(b.fill, b.type, data.data(), b.elements, seed);
  return data;
}

// --- The judge -----------------------------------------------------------------------------------

struct Tolerance {
  std::optional<double> max_abs, max_rel, nmse;
  bool exact = false;
  std::optional<double> peak_rel;  // last, so that {max_abs, max_rel, nmse, exact} still initializes
};

// What a spec without a tolerance for `type` gets: max-abs 1e-6 (float), 1e-3 (half), 1e-2
// (bfloat); integers exact.
inline Tolerance default_tolerance(DType type) {
  Tolerance t;
  switch (type) {
    case DType::f32: t.max_abs = 1e-6; break;
    case DType::f16: t.max_abs = 1e-3; break;
    case DType::bf16: t.max_abs = 1e-2; break;
    default: t.exact = true;
  }
  return t;
}

// `peak` is the largest finite |want| of the buffer (judge computes it), for peak_rel.
inline bool element_ok(double got, double want, const Tolerance& t, double peak = 0) {
  if (is_nan(got) || is_nan(want)) return is_nan(got) && is_nan(want);
  if (is_inf(got) || is_inf(want) || t.exact) return got == want;
  if (!t.max_abs && !t.max_rel && !t.peak_rel) return true;  // judged by nmse alone
  const double diff = magnitude(got - want);
  return (t.max_abs && diff <= *t.max_abs) || (t.max_rel && diff <= *t.max_rel * magnitude(want)) ||
         (t.peak_rel && diff <= *t.peak_rel * peak);
}

inline double peak_magnitude(DType type, const void* want, uint64_t elements) {
  double peak = 0;
  for (uint64_t i = 0; i < elements; ++i) {
    const double w = load_value(type, want, i);
    if (!is_nan(w) && !is_inf(w) && magnitude(w) > peak) peak = magnitude(w);
  }
  return peak;
}

// One output against the reference; max_abs, max_rel and nmse cover finite pairs only, so
// non-finite mismatches are counted apart.
struct Judgement {
  uint64_t elements = 0, mismatches = 0, nonfinite_mismatches = 0;
  double max_abs = 0, max_rel = 0, nmse = 0;
  bool nmse_failed = false;
  std::vector<uint64_t> first_mismatches;  // flat indices, at most the `examples` asked for

  bool ok() const { return mismatches == 0 && !nmse_failed; }
};

inline Judgement judge(DType type, const void* got, const void* want, uint64_t elements, const Tolerance& t,
                       size_t examples = 5) {
  Judgement j;
  j.elements = elements;
  const double peak = t.peak_rel ? peak_magnitude(type, want, elements) : 0;
  double err2 = 0, ref2 = 0;
  for (uint64_t i = 0; i < elements; ++i) {
    const double g = load_value(type, got, i), w = load_value(type, want, i);
    const bool finite = !is_nan(g) && !is_inf(g) && !is_nan(w) && !is_inf(w);
    if (finite) {
      const double diff = magnitude(g - w);
      if (diff > j.max_abs) j.max_abs = diff;
      if (w != 0 && diff / magnitude(w) > j.max_rel) j.max_rel = diff / magnitude(w);
      err2 += diff * diff;
      ref2 += w * w;
    }
    if (element_ok(g, w, t, peak)) continue;
    if (!finite) ++j.nonfinite_mismatches;
    if (j.mismatches++ < examples) j.first_mismatches.push_back(i);
  }
  j.nmse = ref2 > 0 ? err2 / ref2 : err2;
  j.nmse_failed = t.nmse && j.nmse > *t.nmse;
  return j;
}

}  // namespace mtlgen::testdata

#if defined(__clang__)
#pragma float_control(pop)
#elif defined(__GNUC__)
#pragma GCC pop_options
#endif
