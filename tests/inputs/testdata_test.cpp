// The shared generator and judge (mtlgen_testdata.h). Exact numbers of every distribution are
// pinned, so a change of the numbers the Mac and verify draw cannot go unnoticed: the pins were
// computed by an independent implementation of the documented generator (SplitMix64 and
// xoshiro256** from their published definitions, whose own test vectors are checked first).
// The header must stay free of std:: distributions and libm calls.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "mtlgen_testdata.h"

namespace mtlgen::testdata {
namespace {

constexpr uint64_t kSeed = 0xaf63f24c860211eeull;  // buffer_seed(7, "x")

template <typename T>
std::vector<T> filled(const Fill& f, DType type, size_t n, uint64_t seed = kSeed) {
  std::vector<T> out(n);
  fill_elements(f, type, out.data(), n, seed);
  return out;
}

Fill fill_of(Dist dist, double a = 0, double b = 1) {
  Fill f;
  f.dist = dist;
  f.a = a;
  f.b = b;
  return f;
}

uint32_t bits_of(float v) {
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  return u;
}

std::vector<uint32_t> bits_of(const std::vector<float>& values) {
  std::vector<uint32_t> out;
  for (float v : values) out.push_back(bits_of(v));
  return out;
}

TEST(TestDataGenerator, SplitMix64AndXoshiro256StarStarGiveTheirPublishedOutputs) {
  uint64_t state = 0;
  EXPECT_EQ(splitmix64(state), 0xe220a8397b1dcdafull);
  Xoshiro256 rng = Xoshiro256::from_state(1, 2, 3, 4);
  EXPECT_EQ(rng.next(), 11520u);
  EXPECT_EQ(rng.next(), 0u);
  EXPECT_EQ(rng.next(), 1509978240u);
  EXPECT_EQ(rng.next(), 1215971899390074240u);
}

TEST(TestDataGenerator, SeedsMixTheCaseSeedWithTheBuffersName) {
  EXPECT_EQ(buffer_seed(7, "x"), kSeed);
  EXPECT_NE(buffer_seed(7, "x"), buffer_seed(8, "x"));
  EXPECT_NE(buffer_seed(7, "x"), buffer_seed(7, "y"));
}

TEST(TestDataGenerator, NormalNumbersArePinned) {
  EXPECT_EQ(bits_of(filled<float>(fill_of(Dist::normal), DType::f32, 4)),
            (std::vector<uint32_t>{0xbee513c6, 0xbc327dc7, 0xbed73af6, 0xbe610c54}));
  const std::vector<float> scaled = filled<float>(fill_of(Dist::normal, 2, 0.5), DType::f32, 3);
  EXPECT_EQ(scaled, (std::vector<float>{1.7762917280197144f, 1.9945528507232666f, 1.7898141145706177f}));
}

TEST(TestDataGenerator, NormalHasMeanAndStdOfItsParameters) {
  const std::vector<float> v = filled<float>(fill_of(Dist::normal, 3, 2), DType::f32, 200000);
  double sum = 0, sum2 = 0;
  for (float x : v) sum += x, sum2 += double(x) * x;
  const double mean = sum / v.size(), std = std::sqrt(sum2 / v.size() - mean * mean);
  EXPECT_NEAR(mean, 3, 0.02);
  EXPECT_NEAR(std, 2, 0.02);
}

TEST(TestDataGenerator, LogOfMatchesTheMathLibraryToTheLastBitsOrSo) {
  for (double x : {0.3, 1e-30, 0.5, 0.70710678, 0.999999, 1.0, 2.0, 0x1.0p-104}) {
    EXPECT_NEAR(log_of(x), std::log(x), 4e-16 * std::fabs(std::log(x)) + 1e-300) << x;
  }
  EXPECT_EQ(log_of(0.3), -1.2039728043259359);
}

TEST(TestDataGenerator, UniformNumbersArePinnedAndStayInRange) {
  EXPECT_EQ(filled<float>(fill_of(Dist::uniform, -3, 5), DType::f32, 4),
            (std::vector<float>{-0.6207503080368042f, -1.834164023399353f, 0.8478958010673523f, -2.9189186096191406f}));
  for (float v : filled<float>(fill_of(Dist::uniform, -3, 5), DType::f32, 10000)) {
    EXPECT_TRUE(v >= -3 && v < 5) << v;
  }
}

TEST(TestDataGenerator, ChoiceDrawsUniformIndicesAndIsPinned) {
  Fill f = fill_of(Dist::choice);
  f.values = {0.5, -1, 7};
  EXPECT_EQ(filled<float>(f, DType::f32, 8), (std::vector<float>{7, 7, 7, 7, -1, -1, -1, 0.5}));
}

TEST(TestDataGenerator, BitsTakeTheLowBytesOfOneDrawPerElement) {
  EXPECT_EQ(filled<uint32_t>(fill_of(Dist::bits), DType::u32, 3), (std::vector<uint32_t>{0x612ce15d, 0xd2cff579, 0x6ac1ab15}));
  EXPECT_EQ(filled<uint8_t>(fill_of(Dist::bits), DType::u8, 4), (std::vector<uint8_t>{0x5d, 0x79, 0x15, 0x09}));
  std::set<uint8_t> seen;
  for (uint8_t b : filled<uint8_t>(fill_of(Dist::bits), DType::u8, 4096)) seen.insert(b);
  EXPECT_EQ(seen.size(), 256u);
}

TEST(TestDataGenerator, ConstantAndIotaAreExact) {
  EXPECT_EQ(filled<float>(fill_of(Dist::constant, 2.5), DType::f32, 3), (std::vector<float>{2.5, 2.5, 2.5}));
  EXPECT_EQ(filled<int32_t>(fill_of(Dist::iota, -2, 3), DType::i32, 4), (std::vector<int32_t>{-2, 1, 4, 7}));
}

// The specials stream's first units are 0.9617, 0.9874, 0.4018, 0.6941, 0.7720, 0.3388, 0.3033,
// 0.9528, 0.6640, 0.3236: below 0.35 NaN, then +inf below 0.65, -inf below 0.95, else the value.
TEST(TestDataGenerator, SpecialsReplaceValuesByTheirSharesFromTheirOwnStream) {
  Fill f = fill_of(Dist::constant, 1);
  f.nan = 0.35, f.inf = 0.3, f.neg_inf = 0.3;
  const std::vector<float> v = filled<float>(f, DType::f32, 10);
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> finite_or_inf = {1, 1, inf, -inf, -inf, 0, 0, 1, -inf, 0};
  for (size_t i = 0; i < v.size(); ++i) {
    if (finite_or_inf[i] == 0) EXPECT_TRUE(std::isnan(v[i])) << i;
    else EXPECT_EQ(v[i], finite_or_inf[i]) << i;
  }
  Fill normal_with_specials = fill_of(Dist::normal);
  normal_with_specials.nan = 0.5;
  const std::vector<float> plain = filled<float>(fill_of(Dist::normal), DType::f32, 64);
  const std::vector<float> mixed = filled<float>(normal_with_specials, DType::f32, 64);
  for (size_t i = 0; i < plain.size(); ++i) {
    if (!std::isnan(mixed[i])) {
      EXPECT_EQ(mixed[i], plain[i]) << "the values do not move when specials are added";
    }
  }
}

TEST(TestDataGenerator, HalfAndBfloatRoundThroughFloatToNearestEven) {
  Fill f = fill_of(Dist::constant, 0.1);
  EXPECT_EQ(filled<uint16_t>(f, DType::f16, 1)[0], 0x2e66);
  EXPECT_EQ(filled<uint16_t>(f, DType::bf16, 1)[0], 0x3dcd);
  EXPECT_EQ(filled<uint16_t>(fill_of(Dist::constant, 1e6), DType::f16, 1)[0], 0x7c00) << "too large for half: inf";
}

TEST(TestDataGenerator, IntegersRoundHalfAwayFromZeroAndNaNIsZero) {
  Fill f = fill_of(Dist::constant, 0);
  f.set = {{0, 2.5}, {1, -2.5}, {2, 1.4999999999999998}, {3, 300}, {4, std::nan("")}, {5, -0.5}};
  EXPECT_EQ(filled<int8_t>(f, DType::i8, 6), (std::vector<int8_t>{3, -3, 1, 127, 0, -1}));
}

TEST(TestDataGenerator, SetIndicesOutsideTheBufferAreRefused) {
  Fill f = fill_of(Dist::constant, 0);
  f.set = {{4, 1}};
  std::vector<float> v(4);
  EXPECT_THROW(fill_elements(f, DType::f32, v.data(), v.size(), 1), std::invalid_argument);
}

TEST(TestDataGenerator, BlocksFillEachFieldFromItsOwnSeedAndZeroThePadding) {
  BlockLayout layout{"pair", 8, {{"q", DType::u8, 3, 0}, {"s", DType::f32, 1, 4}}};
  Fill f;
  f.fields = {{"q", fill_of(Dist::iota, 1, 1)}, {"s", fill_of(Dist::normal)}};
  std::vector<uint8_t> bytes(16, 0xAB);
  fill_blocks(f, layout, bytes.data(), bytes.size(), 7);
  EXPECT_EQ(std::vector<uint8_t>(bytes.begin(), bytes.begin() + 4), (std::vector<uint8_t>{1, 2, 3, 0}));
  EXPECT_EQ(std::vector<uint8_t>(bytes.begin() + 8, bytes.begin() + 12), (std::vector<uint8_t>{4, 5, 6, 0}));
  float s[2];
  std::memcpy(&s[0], &bytes[4], 4);
  std::memcpy(&s[1], &bytes[12], 4);
  const std::vector<float> alone = filled<float>(fill_of(Dist::normal), DType::f32, 2, buffer_seed(7, "s"));
  EXPECT_EQ(std::vector<float>(s, s + 2), alone);
  EXPECT_THROW(fill_blocks(f, layout, bytes.data(), 12, 7), std::invalid_argument);
}

TEST(TestDataJudge, BoundsExactAndNonFiniteValues) {
  Tolerance abs;
  abs.max_abs = 0.1;
  EXPECT_TRUE(element_ok(1.05, 1.0, abs));
  EXPECT_FALSE(element_ok(1.2, 1.0, abs));
  Tolerance rel;
  rel.max_rel = 0.1;
  EXPECT_TRUE(element_ok(105, 100, rel));
  EXPECT_FALSE(element_ok(1.05, 0.9, rel));
  Tolerance exact;
  exact.exact = true;
  EXPECT_FALSE(element_ok(1.0000001, 1, exact));
  EXPECT_TRUE(element_ok(std::nan(""), std::nan(""), abs));
  EXPECT_FALSE(element_ok(std::nan(""), 1, abs));
  EXPECT_FALSE(element_ok(INFINITY, -INFINITY, abs));
  EXPECT_TRUE(element_ok(-INFINITY, -INFINITY, abs));
  EXPECT_TRUE(element_ok(5, 1, Tolerance{}));  // no bound: judged by nmse alone
}

TEST(TestDataJudge, CountsMismatchesAndNmseOverFinitePairs) {
  const std::vector<float> want = {1, 2, 3, 4, 5, 6};
  const std::vector<float> got = {1, 2.5, 3, std::nanf(""), 5, 9};
  Tolerance t;
  t.max_abs = 0.25;
  t.nmse = 1e-3;
  const Judgement j = judge(DType::f32, got.data(), want.data(), want.size(), t, 2);
  EXPECT_EQ(j.mismatches, 3u);
  EXPECT_EQ(j.nonfinite_mismatches, 1u);
  EXPECT_EQ(j.first_mismatches, (std::vector<uint64_t>{1, 3}));
  EXPECT_EQ(j.max_abs, 3);
  EXPECT_EQ(j.max_rel, 0.5);
  EXPECT_DOUBLE_EQ(j.nmse, (0.25 + 9) / (1 + 4 + 9 + 25 + 36));
  EXPECT_TRUE(j.nmse_failed);
  EXPECT_FALSE(j.ok());
}

// peak_rel bounds every difference by a share of the buffer's largest finite |want| (the
// max|d| / max|ref| of gradient parity): an element near 0 may be off by what a large one may.
TEST(TestDataJudge, PeakRelScalesWithTheLargestExpectedMagnitude) {
  const std::vector<float> want = {100, 0.01f, -50, std::nanf(""), INFINITY};
  std::vector<float> got = {100.05f, 0.08f, -50, std::nanf(""), INFINITY};
  Tolerance t;
  t.peak_rel = 1e-3;  // 1e-3 * 100: 0.1
  EXPECT_TRUE(judge(DType::f32, got.data(), want.data(), want.size(), t).ok());
  got[1] = 0.12f;  // 0.11 off: above 0.1
  const Judgement j = judge(DType::f32, got.data(), want.data(), want.size(), t);
  EXPECT_EQ(j.mismatches, 1u);
  EXPECT_EQ(j.first_mismatches, (std::vector<uint64_t>{1}));
  // max_rel alone fails the small element that peak_rel accepts; any one bound suffices.
  Tolerance rel;
  rel.max_rel = 1e-3;
  got[1] = 0.08f;
  EXPECT_EQ(judge(DType::f32, got.data(), want.data(), want.size(), rel).first_mismatches, (std::vector<uint64_t>{1}));
  rel.peak_rel = 1e-3;
  EXPECT_TRUE(judge(DType::f32, got.data(), want.data(), want.size(), rel).ok());
  EXPECT_TRUE(element_ok(0.5, 0.45, t, 100));
  EXPECT_FALSE(element_ok(0.5, 0.45, t, 10));
}

TEST(TestDataJudge, DefaultsFollowDesign) {
  EXPECT_EQ(default_tolerance(DType::f32).max_abs, 1e-6);
  EXPECT_EQ(default_tolerance(DType::f16).max_abs, 1e-3);
  EXPECT_EQ(default_tolerance(DType::bf16).max_abs, 1e-2);
  EXPECT_TRUE(default_tolerance(DType::i32).exact);
}

std::string header_code() {
  std::ifstream in(std::string(MTLGEN_SOURCE_DIR) + "/templates/support/mtlgen_testdata.h");
  std::stringstream text;
  text << in.rdbuf();
  return std::regex_replace(text.str(), std::regex("//[^\n]*"), "");  // comments may name what code must not use
}

TEST(TestDataHeader, UsesNoStdDistributionAndNoLibmFunction) {
  const std::string code = header_code();
  ASSERT_GT(code.size(), 1000u);
  const std::regex forbidden(
      "<random>|<cmath>|<math\\.h>|_distribution|mt19937|random_device|minstd|"
      "\\b(log|log2|log10|log1p|exp|exp2|expm1|pow|sin|cos|tan|asin|acos|atan|atan2|sinh|cosh|tanh|erf|erfc|cbrt|"
      "hypot|lgamma|tgamma|fma|round|lround|llround|rint|nearbyint)[fl]?\\s*\\(");
  std::smatch found;
  EXPECT_FALSE(std::regex_search(code, found, forbidden)) << "uses " << found.str();
}

TEST(TestDataHeader, TurnsFloatingPointContractionOffForClangAndGcc) {
  const std::string code = header_code();
  EXPECT_NE(code.find("#pragma clang fp contract(off)"), std::string::npos);
  EXPECT_NE(code.find("#pragma GCC optimize(\"fp-contract=off\")"), std::string::npos);
}

}  // namespace
}  // namespace mtlgen::testdata
