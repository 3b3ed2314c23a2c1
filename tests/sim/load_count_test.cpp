// Done-when proof of issue 13 item 5: the emitted rms_norm, softmax, layer_norm and add_rms_norm
// read each element of x once when a row fits in the threadgroup's registers (TG * N_READS
// elements, N_READS = 4), and write each element of out once. Counted per byte while the
// simulator runs the generated MSL (mtlsim/access_counter.h); the former rms_norm and softmax,
// which read x two and three times, must fail the same check.
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "load_count_kernels.h"
#include "mtlsim/access_counter.h"
#include "sim_test_util.h"

namespace mtlsim::load_count {

void PrintTo(RowKernel which, std::ostream* os) { *os << name_of(which); }

namespace {

constexpr uint32_t kNReads = 4;  // the N_READS of specs/rms_norm.yaml, softmax.yaml and layer_norm.yaml

// Accesses per float element of a watched buffer; -1 where the element's four bytes disagree.
std::vector<int64_t> per_element(const std::vector<uint32_t>& byte_counts) {
  std::vector<int64_t> out(byte_counts.size() / sizeof(float));
  for (size_t e = 0; e < out.size(); ++e) {
    const uint32_t* b = &byte_counts[e * sizeof(float)];
    out[e] = b[0] == b[1] && b[1] == b[2] && b[2] == b[3] ? int64_t(b[0]) : -1;
  }
  return out;
}

struct Counts {
  std::vector<int64_t> x_loads, out_stores, h_loads, h_stores;  // h: add_rms_norm only
};

Counts run_counted(RowKernel kernel, uint32_t tg, uint32_t rows, uint32_t n) {
  std::vector<float> x = test::random_floats(size_t(rows) * n, 5, -3.0f, 3.0f);
  std::vector<float> w = test::random_floats(n, 6, 0.5f, 1.5f);
  std::vector<float> b = test::random_floats(n, 7, -0.5f, 0.5f);
  std::vector<float> out(size_t(rows) * n), h(size_t(rows) * n);
  std::vector<float> residual = test::random_floats(size_t(rows) * n, 8, -3.0f, 3.0f);
  RowArgs args{x.data(), w.data(), b.data(), out.data(), residual.data(), h.data(), rows, n};
  DispatchOptions o = test::grid_1d(rows, tg, "load_count");
  o.threadgroup_arrays = {{tg / 32 * sizeof(float), {}}, {sizeof(float), {}}};
  watch_accesses(x.data(), x.size() * sizeof(float));
  watch_accesses(out.data(), out.size() * sizeof(float));
  watch_accesses(h.data(), h.size() * sizeof(float));
  const DispatchResult r = dispatch(o, row_kernel_launcher(kernel, tg), &args);
  const AccessCounts h_counts = take_access_counts(h.data());
  Counts c{per_element(take_access_counts(x.data()).loads), per_element(take_access_counts(out.data()).stores),
           per_element(h_counts.loads), per_element(h_counts.stores)};
  EXPECT_TRUE(r.ok()) << test::describe(r);
  return c;
}

// "" when element i of every row was accessed expected(i % n) times, else the first mismatch.
template <class Expected>
std::string mismatch(const std::vector<int64_t>& counts, uint32_t n, Expected expected) {
  for (size_t i = 0; i < counts.size(); ++i) {
    const int64_t want = expected(uint32_t(i % n));
    if (counts[i] != want)
      return "element " + std::to_string(i) + " (row " + std::to_string(i / n) + ", column " + std::to_string(i % n) +
             ") accessed " + std::to_string(counts[i]) + " times, expected " + std::to_string(want);
  }
  return "";
}

struct Shape {
  uint32_t tg, rows, n;
};

// Rows that fit in registers: one element, a partial simdgroup, a guarded tail in one thread
// (33 = 8 full groups of 4 + 1), full groups only (2,048 at TG 512), and a ragged longest row.
const Shape kFitting[] = {{32, 2, 1}, {32, 3, 33}, {256, 2, 1001}, {512, 4, 2048}, {1024, 2, 4093}};

const auto once = [](uint32_t) { return int64_t(1); };

class ReadsOnce : public ::testing::TestWithParam<RowKernel> {};

TEST_P(ReadsOnce, EachElementOfARowThatFitsIsReadOnceAndWrittenOnce) {
  for (const Shape& s : kFitting) {
    SCOPED_TRACE("TG " + std::to_string(s.tg) + ", rows " + std::to_string(s.rows) + ", n " + std::to_string(s.n));
    ASSERT_LE(s.n, s.tg * kNReads);
    const Counts c = run_counted(GetParam(), s.tg, s.rows, s.n);
    EXPECT_EQ(mismatch(c.x_loads, s.n, once), "");
    EXPECT_EQ(mismatch(c.out_stores, s.n, once), "");
  }
}

// A longer row keeps its first chunk (TG * N_READS elements) in registers and reads the rest once
// per pass: twice (rms_norm: sum of squares, scale; softmax: running max and sum, normalise),
// three times (layer_norm: mean, variance, normalise) or once (add_rms_norm reads h back instead).
TEST_P(ReadsOnce, ALongerRowReadsOnlyElementsPastTheFirstChunkAgain) {
  const int64_t passes = GetParam() == RowKernel::layer_norm ? 3 : GetParam() == RowKernel::add_rms_norm ? 1 : 2;
  for (const Shape& s : {Shape{32, 2, 4097}, Shape{256, 1, 1025}}) {
    SCOPED_TRACE("TG " + std::to_string(s.tg) + ", n " + std::to_string(s.n));
    const Counts c = run_counted(GetParam(), s.tg, s.rows, s.n);
    const uint32_t chunk = s.tg * kNReads;
    EXPECT_EQ(mismatch(c.x_loads, s.n, [&](uint32_t i) { return i < chunk ? 1 : passes; }), "");
    EXPECT_EQ(mismatch(c.out_stores, s.n, once), "");
  }
}

INSTANTIATE_TEST_SUITE_P(Shipped, ReadsOnce, ::testing::Values(RowKernel::rms_norm, RowKernel::softmax, RowKernel::layer_norm,
                                                           RowKernel::add_rms_norm),
                         [](const auto& info) { return std::string(name_of(info.param)); });

// add_rms_norm writes h once and reads it back only past the first chunk (x is read once always).
TEST(ReadsOnce, AddRmsNormReadsBackOnlyTheHPastTheFirstChunk) {
  for (const Shape& s : {Shape{512, 4, 2048}, Shape{32, 2, 33}, Shape{32, 2, 4097}}) {
    SCOPED_TRACE("TG " + std::to_string(s.tg) + ", n " + std::to_string(s.n));
    const Counts c = run_counted(RowKernel::add_rms_norm, s.tg, s.rows, s.n);
    const uint32_t chunk = s.tg * kNReads;
    EXPECT_EQ(mismatch(c.x_loads, s.n, once), "");
    EXPECT_EQ(mismatch(c.h_stores, s.n, once), "");
    EXPECT_EQ(mismatch(c.h_loads, s.n, [&](uint32_t i) { return int64_t(i < chunk ? 0 : 1); }), "");
  }
}

// The counter sees re-reads: the former kernels fail the check above, with their pass counts.
TEST(ReadsOnce, TheFormerKernelsReadEveryElementOncePerPass) {
  const Shape s{512, 4, 2048};
  const Counts rms = run_counted(RowKernel::rms_norm_reads_twice, s.tg, s.rows, s.n);
  EXPECT_NE(mismatch(rms.x_loads, s.n, once), "");
  EXPECT_EQ(mismatch(rms.x_loads, s.n, [](uint32_t) { return int64_t(2); }), "");
  const Counts softmax = run_counted(RowKernel::softmax_three_pass, s.tg, s.rows, s.n);
  EXPECT_NE(mismatch(softmax.x_loads, s.n, once), "");
  EXPECT_EQ(mismatch(softmax.x_loads, s.n, [](uint32_t) { return int64_t(3); }), "");
}

}  // namespace
}  // namespace mtlsim::load_count
