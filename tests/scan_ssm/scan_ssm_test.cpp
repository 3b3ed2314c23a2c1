// The SSD and GLA scan references (specs/ssd_scan*.yaml, specs/gla_scan*.yaml), as mtlgen generates
// them: chunked prefill (two runs with the state carried equal one run), the zero-state forward
// equals the stateful one from h0 = 0, the hand-written backward references against central
// differences of the forward references, and the shape constraints users meet.
// `mtlgen verify` then checks the kernels against these references.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "gla_scan/gla_scan_reference.h"
#include "gla_scan_backward/gla_scan_backward_reference.h"
#include "gla_scan_state/gla_scan_state_reference.h"
#include "ssd_scan/ssd_scan_reference.h"
#include "ssd_scan_backward/ssd_scan_backward_reference.h"
#include "ssd_scan_state/ssd_scan_state_reference.h"

namespace {

namespace ssd = mtlgen::kernels::ssd_scan;
namespace ssd_state = mtlgen::kernels::ssd_scan_state;
namespace ssd_bwd = mtlgen::kernels::ssd_scan_backward;
namespace gla = mtlgen::kernels::gla_scan;
namespace gla_state = mtlgen::kernels::gla_scan_state;
namespace gla_bwd = mtlgen::kernels::gla_scan_backward;

using Tensor = std::vector<float>;

Tensor normal(size_t n, std::mt19937& rng, float std = 1.0f) {
  std::normal_distribution<float> dist(0.0f, std);
  Tensor t(n);
  for (float& x : t) x = dist(rng);
  return t;
}

Tensor uniform(size_t n, std::mt19937& rng, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  Tensor t(n);
  for (float& x : t) x = dist(rng);
  return t;
}

// Steps [t0, t1) of a tensor laid out (batch, seq_len, ...).
Tensor steps(const Tensor& x, int64_t batch, int64_t seq_len, int64_t t0, int64_t t1) {
  const size_t per_step = x.size() / size_t(batch * seq_len);
  Tensor out;
  for (int64_t b = 0; b < batch; ++b) {
    const auto first = x.begin() + std::ptrdiff_t((b * seq_len + t0) * int64_t(per_step));
    out.insert(out.end(), first, first + std::ptrdiff_t((t1 - t0) * int64_t(per_step)));
  }
  return out;
}

double max_abs(const Tensor& x) {
  double m = 0.0;
  for (float v : x) m = std::max(m, double(std::fabs(v)));
  return m;
}

double max_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0.0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) m = std::max(m, std::fabs(double(a[i]) - double(b[i])));
  return m;
}

double dot(const Tensor& a, const Tensor& b) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i) s += double(a[i]) * double(b[i]);
  return s;
}

// An input of the forward pass and the backward reference's gradient of the loss with respect to it.
struct Param {
  const char* name;
  Tensor* value;
  const Tensor* grad;
};

// Every coordinate of every parameter: the central difference (f(x + e) - f(x - e)) / (x+e - (x-e)),
// the step measured after rounding to float, must be within 1e-3 * max|grad| of the backward
// reference (the parity measure the kernels are held to). The loss sums outputs times fixed random
// weights, so its gradient is the backward pass fed those weights as dy and dh_final.
void expect_matches_central_differences(const std::vector<Param>& params, const std::function<double()>& loss,
                                        float step) {
  for (const Param& p : params) {
    const double scale = max_abs(*p.grad);
    ASSERT_GT(scale, 0.0) << p.name << ": an all-zero gradient checks nothing";
    double worst = 0.0;
    size_t worst_at = 0;
    double worst_fd = 0.0;
    for (size_t i = 0; i < p.value->size(); ++i) {
      const float x = (*p.value)[i];
      const float up = x + step;
      const float down = x - step;
      (*p.value)[i] = up;
      const double loss_up = loss();
      (*p.value)[i] = down;
      const double loss_down = loss();
      (*p.value)[i] = x;
      const double fd = (loss_up - loss_down) / (double(up) - double(down));
      const double diff = std::fabs(fd - double((*p.grad)[i]));
      if (diff > worst) {
        worst = diff;
        worst_at = i;
        worst_fd = fd;
      }
    }
    EXPECT_LE(worst, 1e-3 * scale) << p.name << "[" << worst_at << "]: backward " << (*p.grad)[worst_at]
                                   << ", central difference " << worst_fd << " (max |grad| " << scale << ")";
  }
}

// ---------------------------------------------------------------------------------------------
// SSD

struct SsdInputs {
  int64_t batch, seq_len, heads, head_dim, d_state;
  Tensor u, delta, A, B, C, h0;

  SsdInputs(int64_t b, int64_t l, int64_t h, int64_t p, int64_t n, std::mt19937& rng, bool growing_gates = false)
      : batch(b), seq_len(l), heads(h), head_dim(p), d_state(n),
        u(normal(size_t(b * l * h * p), rng)),
        delta(growing_gates ? uniform(size_t(b * l * h), rng, -0.3f, 0.3f) : uniform(size_t(b * l * h), rng, 0.01f, 0.5f)),
        A(growing_gates ? uniform(size_t(h * n), rng, -1.0f, 1.0f) : uniform(size_t(h * n), rng, -2.0f, -0.1f)),
        B(normal(size_t(b * l * h * n), rng)), C(normal(size_t(b * l * h * n), rng)),
        h0(normal(size_t(b * h * p * n), rng)) {}

  ssd_state::Dims dims() const {
    return {uint32_t(batch), uint32_t(seq_len), uint32_t(heads), uint32_t(head_dim), uint32_t(d_state)};
  }
  size_t outputs() const { return size_t(batch * seq_len * heads * head_dim); }
  size_t states() const { return size_t(batch * heads * head_dim * d_state); }

  // The inputs of steps [t0, t1), starting from `state`.
  SsdInputs chunk(int64_t t0, int64_t t1, const Tensor& state) const {
    SsdInputs c = *this;
    c.seq_len = t1 - t0;
    c.u = steps(u, batch, seq_len, t0, t1);
    c.delta = steps(delta, batch, seq_len, t0, t1);
    c.B = steps(B, batch, seq_len, t0, t1);
    c.C = steps(C, batch, seq_len, t0, t1);
    c.h0 = state;
    return c;
  }

  void forward(Tensor& y, Tensor& h_final) const {
    y.assign(outputs(), 0.0f);
    h_final.assign(states(), 0.0f);
    ssd_state::reference<float>(dims(), u, delta, A, B, C, h0, y, h_final);
  }
};

TEST(SsdScan, TwoChunksWithTheStateCarriedEqualOneRun) {
  std::mt19937 rng(101);
  const SsdInputs all(2, 64, 2, 32, 8, rng);
  Tensor y, h_final;
  all.forward(y, h_final);

  Tensor y1, mid, y2, h_end;
  all.chunk(0, 24, all.h0).forward(y1, mid);
  all.chunk(24, 64, mid).forward(y2, h_end);
  // The carried state is rounded to f32 once (h_final is f32), so agreement is to f32 rounding.
  EXPECT_LE(max_diff(y1, steps(y, 2, 64, 0, 24)), 1e-5 * max_abs(y));
  EXPECT_LE(max_diff(y2, steps(y, 2, 64, 24, 64)), 1e-5 * max_abs(y));
  EXPECT_LE(max_diff(h_end, h_final), 1e-5 * max_abs(h_final));

  // Dropping the carried state changes the second chunk: the comparison above can fail.
  Tensor y2_cold, h_cold;
  all.chunk(24, 64, Tensor(all.states(), 0.0f)).forward(y2_cold, h_cold);
  EXPECT_GT(max_diff(y2_cold, steps(y, 2, 64, 24, 64)), 1e-3 * max_abs(y));
}

TEST(SsdScan, ForwardIsTheStatefulForwardFromZero) {
  std::mt19937 rng(103);
  SsdInputs in(2, 40, 3, 64, 5, rng);
  in.h0.assign(in.states(), 0.0f);
  Tensor y_state, h_final;
  in.forward(y_state, h_final);
  Tensor y(in.outputs(), 0.0f);
  ssd::reference<float>({uint32_t(in.batch), uint32_t(in.seq_len), uint32_t(in.heads), uint32_t(in.head_dim),
                         uint32_t(in.d_state)},
                        in.u, in.delta, in.A, in.B, in.C, y);
  EXPECT_EQ(y, y_state);
}

void check_ssd_backward(SsdInputs& in, int64_t seg, std::mt19937& rng) {
  const Tensor dy = normal(in.outputs(), rng);
  const Tensor dh_final = normal(in.states(), rng);
  auto loss = [&] {
    Tensor y, h_final;
    in.forward(y, h_final);
    return dot(y, dy) + dot(h_final, dh_final);
  };
  Tensor du(in.outputs()), ddelta(in.delta.size()), dA(in.A.size()), dB(in.B.size()), dC(in.C.size()),
      dh0(in.states());
  const ssd_bwd::Dims dims{uint32_t(in.batch), uint32_t(in.seq_len), uint32_t(in.heads), uint32_t(in.head_dim),
                           uint32_t(in.d_state), uint32_t(seg)};
  ssd_bwd::reference<float>(dims, in.u, in.delta, in.A, in.B, in.C, in.h0, dy, dh_final, du, ddelta, dA, dB, dC, dh0);
  expect_matches_central_differences({{"du", &in.u, &du},
                                      {"ddelta", &in.delta, &ddelta},
                                      {"dA", &in.A, &dA},
                                      {"dB", &in.B, &dB},
                                      {"dC", &in.C, &dC},
                                      {"dh0", &in.h0, &dh0}},
                                     loss, 1e-2f);
}

TEST(SsdScan, BackwardReferenceMatchesCentralDifferences) {
  std::mt19937 rng(107);
  SsdInputs in(2, 8, 2, 32, 3, rng);
  check_ssd_backward(in, 4, rng);
}

TEST(SsdScan, BackwardReferenceMatchesCentralDifferencesWithGrowingGatesAndNegativeSteps) {
  std::mt19937 rng(109);
  SsdInputs in(1, 12, 2, 32, 4, rng, /*growing_gates=*/true);
  check_ssd_backward(in, 6, rng);
}

// ---------------------------------------------------------------------------------------------
// GLA

struct GlaInputs {
  int64_t batch, seq_len, heads, head_dim, key_dim;
  Tensor q, k, v, g, h0;

  GlaInputs(int64_t b, int64_t l, int64_t h, int64_t p, int64_t kd, std::mt19937& rng, float gate_lo = 0.8f,
            float gate_hi = 1.0f)
      : batch(b), seq_len(l), heads(h), head_dim(p), key_dim(kd),
        q(normal(size_t(b * l * h * kd), rng)), k(normal(size_t(b * l * h * kd), rng)),
        v(normal(size_t(b * l * h * p), rng)), g(uniform(size_t(b * l * h * kd), rng, gate_lo, gate_hi)),
        h0(normal(size_t(b * h * kd * p), rng)) {}

  gla_state::Dims dims() const {
    return {uint32_t(batch), uint32_t(seq_len), uint32_t(heads), uint32_t(head_dim), uint32_t(key_dim)};
  }
  size_t outputs() const { return size_t(batch * seq_len * heads * head_dim); }
  size_t states() const { return size_t(batch * heads * key_dim * head_dim); }

  GlaInputs chunk(int64_t t0, int64_t t1, const Tensor& state) const {
    GlaInputs c = *this;
    c.seq_len = t1 - t0;
    c.q = steps(q, batch, seq_len, t0, t1);
    c.k = steps(k, batch, seq_len, t0, t1);
    c.v = steps(v, batch, seq_len, t0, t1);
    c.g = steps(g, batch, seq_len, t0, t1);
    c.h0 = state;
    return c;
  }

  void forward(Tensor& o, Tensor& h_final) const {
    o.assign(outputs(), 0.0f);
    h_final.assign(states(), 0.0f);
    gla_state::reference<float>(dims(), q, k, v, g, h0, o, h_final);
  }
};

TEST(GlaScan, TwoChunksWithTheStateCarriedEqualOneRun) {
  std::mt19937 rng(201);
  const GlaInputs all(2, 64, 2, 32, 8, rng);
  Tensor o, h_final;
  all.forward(o, h_final);

  Tensor o1, mid, o2, h_end;
  all.chunk(0, 40, all.h0).forward(o1, mid);
  all.chunk(40, 64, mid).forward(o2, h_end);
  EXPECT_LE(max_diff(o1, steps(o, 2, 64, 0, 40)), 1e-5 * max_abs(o));
  EXPECT_LE(max_diff(o2, steps(o, 2, 64, 40, 64)), 1e-5 * max_abs(o));
  EXPECT_LE(max_diff(h_end, h_final), 1e-5 * max_abs(h_final));

  Tensor o2_cold, h_cold;
  all.chunk(40, 64, Tensor(all.states(), 0.0f)).forward(o2_cold, h_cold);
  EXPECT_GT(max_diff(o2_cold, steps(o, 2, 64, 40, 64)), 1e-3 * max_abs(o));
}

TEST(GlaScan, ForwardIsTheStatefulForwardFromZero) {
  std::mt19937 rng(203);
  GlaInputs in(2, 40, 3, 64, 5, rng);
  in.h0.assign(in.states(), 0.0f);
  Tensor o_state, h_final;
  in.forward(o_state, h_final);
  Tensor o(in.outputs(), 0.0f);
  gla::reference<float>({uint32_t(in.batch), uint32_t(in.seq_len), uint32_t(in.heads), uint32_t(in.head_dim),
                         uint32_t(in.key_dim)},
                        in.q, in.k, in.v, in.g, o);
  EXPECT_EQ(o, o_state);
}

void check_gla_backward(GlaInputs& in, int64_t seg, std::mt19937& rng) {
  const Tensor d_o = normal(in.outputs(), rng);
  const Tensor dh_final = normal(in.states(), rng);
  auto loss = [&] {
    Tensor o, h_final;
    in.forward(o, h_final);
    return dot(o, d_o) + dot(h_final, dh_final);
  };
  Tensor dq(in.q.size()), dk(in.k.size()), dv(in.v.size()), dg(in.g.size()), dh0(in.states());
  const gla_bwd::Dims dims{uint32_t(in.batch), uint32_t(in.seq_len), uint32_t(in.heads), uint32_t(in.head_dim),
                           uint32_t(in.key_dim), uint32_t(seg)};
  gla_bwd::reference<float>(dims, in.q, in.k, in.v, in.g, in.h0, d_o, dh_final, dq, dk, dv, dg, dh0);
  expect_matches_central_differences(
      {{"dq", &in.q, &dq}, {"dk", &in.k, &dk}, {"dv", &in.v, &dv}, {"dg", &in.g, &dg}, {"dh0", &in.h0, &dh0}}, loss,
      1e-2f);
}

TEST(GlaScan, BackwardReferenceMatchesCentralDifferences) {
  std::mt19937 rng(207);
  GlaInputs in(2, 8, 2, 32, 3, rng);
  check_gla_backward(in, 4, rng);
}

TEST(GlaScan, BackwardReferenceMatchesCentralDifferencesWithNegativeAndGrowingGates) {
  std::mt19937 rng(209);
  GlaInputs in(1, 12, 2, 32, 4, rng, -1.1f, 1.1f);
  check_gla_backward(in, 6, rng);
}

// ---------------------------------------------------------------------------------------------
// Shape constraints: the reference, the glue and the simulator share check_dims, so its message is
// what a caller sees.

template <typename Check>
void expect_rejected(Check check, const std::string& constraint) {
  try {
    check();
    ADD_FAILURE() << "accepted dims that violate " << constraint;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(constraint), std::string::npos) << e.what();
  }
}

TEST(ScanShapes, SequenceNotAMultipleOfTheSegmentIsRejected) {
  expect_rejected([] { ssd_bwd::check_dims({1, 100, 1, 32, 4, 32}); }, "seq_len % seg == 0");
  expect_rejected([] { gla_bwd::check_dims({1, 100, 1, 32, 4, 32}); }, "seq_len % seg == 0");
  EXPECT_NO_THROW(ssd_bwd::check_dims({1, 96, 1, 32, 4, 32}));
  EXPECT_NO_THROW(gla_bwd::check_dims({1, 96, 1, 32, 4, 32}));
}

TEST(ScanShapes, LaneDimNotAMultipleOf32IsRejected) {
  expect_rejected([] { ssd::check_dims({1, 8, 1, 48, 4}); }, "head_dim % 32 == 0");
  expect_rejected([] { ssd_state::check_dims({1, 8, 1, 48, 4}); }, "head_dim % 32 == 0");
  expect_rejected([] { ssd_bwd::check_dims({1, 8, 1, 48, 4, 4}); }, "head_dim % 32 == 0");
  expect_rejected([] { gla::check_dims({1, 8, 1, 48, 4}); }, "head_dim % 32 == 0");
  expect_rejected([] { gla_state::check_dims({1, 8, 1, 48, 4}); }, "head_dim % 32 == 0");
  expect_rejected([] { gla_bwd::check_dims({1, 8, 1, 48, 4, 4}); }, "head_dim % 32 == 0");
}

TEST(ScanShapes, TheReferenceChecksItsDims) {
  std::mt19937 rng(301);
  SsdInputs in(1, 10, 1, 32, 2, rng);
  Tensor dy(in.outputs()), dhf(in.states()), du(in.outputs()), ddelta(in.delta.size()), dA(in.A.size()),
      dB(in.B.size()), dC(in.C.size()), dh0(in.states());
  expect_rejected(
      [&] {
        ssd_bwd::reference<float>({1, 10, 1, 32, 2, 4}, in.u, in.delta, in.A, in.B, in.C, in.h0, dy, dhf, du, ddelta,
                                  dA, dB, dC, dh0);
      },
      "seq_len % seg == 0");
}

}  // namespace
