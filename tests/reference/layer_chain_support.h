#pragma once
// What the layer chain tests share: fills drawn as the verifier draws them and the verifier's
// judgement of a chained output against the family reference's.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "support/mtlgen_testdata.h"

namespace layer_chain {

namespace td = mtlgen::testdata;

template <typename T>
constexpr mtlgen::DType dtype_of() {
  return std::is_same_v<T, float> ? mtlgen::DType::f32 : mtlgen::DType::bf16;
}

inline td::Fill fill(td::Dist dist, double a, double b) {
  td::Fill f;
  f.dist = dist;
  f.a = a;
  f.b = b;
  return f;
}

inline td::Fill normal(double std) { return fill(td::Dist::normal, 0, std); }

// n elements of buffer `name` under the spec's seed.
template <typename T>
std::vector<T> filled(size_t n, const td::Fill& f, uint64_t seed, const std::string& name) {
  std::vector<T> v(n);
  td::fill_elements(f, dtype_of<T>(), v.data(), n, td::buffer_seed(seed, name));
  return v;
}

inline td::Tolerance tolerance(double max_abs, double max_rel, double nmse) {
  td::Tolerance t;
  t.max_abs = max_abs;
  t.max_rel = max_rel;
  t.nmse = nmse;
  return t;
}

template <typename T>
void expect_close(const std::vector<T>& chained, const std::vector<T>& family, const td::Tolerance& tolerance,
                  const char* buffer) {
  const td::Judgement j = td::judge(dtype_of<T>(), chained.data(), family.data(), family.size(), tolerance);
  EXPECT_TRUE(j.ok()) << buffer << ": " << j.mismatches << " of " << j.elements << " elements off, max|d| " << j.max_abs
                      << " rel " << j.max_rel << " nmse " << j.nmse;
}

}  // namespace layer_chain
