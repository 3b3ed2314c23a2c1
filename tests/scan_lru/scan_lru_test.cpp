// The RG-LRU and rotational LRU references (specs/rglru_scan*.yaml, specs/rotlru_scan*.yaml), as
// mtlgen generates them: chunked prefill (two runs with the state carried equal one run), the
// zero-state forward against the stateful one, rotlru at theta = 0 against rglru, norm-preserving
// rotations, the hand-written backward references against central differences of the forward
// references, the checkpointed kernels' references composed against the full-history family
// reference, the shape constraints users meet and the checkpoint cost. `mtlgen verify` then checks
// the kernels against these references (bit for bit on the simulator).
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

#include "rglru_scan/rglru_scan_reference.h"
#include "rglru_scan_backward/rglru_scan_backward_reference.h"
#include "rglru_scan_backward_segments/rglru_scan_backward_segments_reference.h"
#include "rglru_scan_checkpoints/rglru_scan_checkpoints_reference.h"
#include "rglru_scan_state/rglru_scan_state_reference.h"
#include "rotlru_scan/rotlru_scan_reference.h"
#include "rotlru_scan_backward/rotlru_scan_backward_reference.h"
#include "rotlru_scan_backward_segments/rotlru_scan_backward_segments_reference.h"
#include "rotlru_scan_checkpoints/rotlru_scan_checkpoints_reference.h"
#include "rotlru_scan_state/rotlru_scan_state_reference.h"

namespace {

namespace rg = mtlgen::kernels::rglru_scan;
namespace rg_state = mtlgen::kernels::rglru_scan_state;
namespace rg_bwd = mtlgen::kernels::rglru_scan_backward;
namespace rg_ck = mtlgen::kernels::rglru_scan_checkpoints;
namespace rg_seg = mtlgen::kernels::rglru_scan_backward_segments;
namespace rot = mtlgen::kernels::rotlru_scan;
namespace rot_state = mtlgen::kernels::rotlru_scan_state;
namespace rot_bwd = mtlgen::kernels::rotlru_scan_backward;
namespace rot_ck = mtlgen::kernels::rotlru_scan_checkpoints;
namespace rot_seg = mtlgen::kernels::rotlru_scan_backward_segments;

using Tensor = std::vector<float>;

// A problem: the forward's inputs and the gradients flowing into its outputs.
struct Problem {
  int64_t batch, seq_len, dim, seg;
  Tensor a, b, theta, h0, dy, dh_final;
};

Tensor uniform(size_t n, std::mt19937& rng, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  Tensor t(n);
  for (float& x : t) x = dist(rng);
  return t;
}

// Gates in [gate_lo, gate_hi] (negative and above 1 allowed), angles over the whole circle.
Problem make_problem(int64_t batch, int64_t seq_len, int64_t dim, int64_t seg, float gate_lo, float gate_hi,
                     unsigned seed) {
  std::mt19937 rng(seed);
  const size_t steps = size_t(batch * seq_len * dim);
  Problem p{batch, seq_len, dim, seg, {}, {}, {}, {}, {}, {}};
  p.a = uniform(steps, rng, gate_lo, gate_hi);
  p.b = uniform(steps, rng, -1.0f, 1.0f);
  p.theta = uniform(steps / 2, rng, -3.14159f, 3.14159f);
  p.h0 = uniform(size_t(batch * dim), rng, -1.0f, 1.0f);
  p.dy = uniform(steps, rng, -1.0f, 1.0f);
  p.dh_final = uniform(size_t(batch * dim), rng, -1.0f, 1.0f);
  return p;
}

// Steps [t0, t1) of a tensor laid out (batch, seq_len, ...).
Tensor steps(const Tensor& x, int64_t batch, int64_t seq_len, int64_t t0, int64_t t1) {
  const int64_t per_step = int64_t(x.size()) / (batch * seq_len);
  Tensor out;
  for (int64_t n = 0; n < batch; ++n) {
    const auto first = x.begin() + std::ptrdiff_t((n * seq_len + t0) * per_step);
    out.insert(out.end(), first, first + std::ptrdiff_t((t1 - t0) * per_step));
  }
  return out;
}

// Two (batch, steps, ...) tensors joined along the steps.
Tensor join(const Tensor& x, int64_t x_steps, const Tensor& y, int64_t y_steps, int64_t batch) {
  const int64_t per_step = int64_t(x.size()) / (batch * x_steps);
  Tensor out;
  for (int64_t n = 0; n < batch; ++n) {
    out.insert(out.end(), x.begin() + n * x_steps * per_step, x.begin() + (n + 1) * x_steps * per_step);
    out.insert(out.end(), y.begin() + n * y_steps * per_step, y.begin() + (n + 1) * y_steps * per_step);
  }
  return out;
}

double max_abs(const Tensor& x) {
  double m = 0.0;
  for (float v : x) m = std::max(m, double(std::fabs(v)));
  return m;
}

double dot(const Tensor& x, const Tensor& y) {
  double s = 0.0;
  for (size_t i = 0; i < x.size(); ++i) s += double(x[i]) * double(y[i]);
  return s;
}

// ---- the references over a Problem ----

struct Forward {
  Tensor y, h_final;
};

rg_state::Dims rg_state_dims(const Problem& p, int64_t seq_len) {
  rg_state::Dims d;
  d.batch = uint32_t(p.batch);
  d.seq_len = uint32_t(seq_len);
  d.dim = uint32_t(p.dim);
  return d;
}

rot_state::Dims rot_state_dims(const Problem& p, int64_t seq_len) {
  rot_state::Dims d;
  d.batch = uint32_t(p.batch);
  d.seq_len = uint32_t(seq_len);
  d.dim = uint32_t(p.dim);
  return d;
}

Forward rglru_forward(const Problem& p, const Tensor& a, const Tensor& b, const Tensor& h0, int64_t seq_len) {
  Forward f{Tensor(a.size()), Tensor(h0.size())};
  rg_state::reference<float>(rg_state_dims(p, seq_len), a, b, h0, f.y, f.h_final);
  return f;
}

Forward rotlru_forward(const Problem& p, const Tensor& a, const Tensor& b, const Tensor& theta, const Tensor& h0,
                       int64_t seq_len) {
  Forward f{Tensor(a.size()), Tensor(h0.size())};
  rot_state::reference<float>(rot_state_dims(p, seq_len), a, b, theta, h0, f.y, f.h_final);
  return f;
}

struct Gradients {
  Tensor da, db, dtheta, dh0;
};

Gradients rglru_backward(const Problem& p) {
  rg_bwd::Dims d;
  d.batch = uint32_t(p.batch);
  d.seq_len = uint32_t(p.seq_len);
  d.dim = uint32_t(p.dim);
  d.seg = uint32_t(p.seg);
  Gradients g{Tensor(p.a.size()), Tensor(p.a.size()), {}, Tensor(p.h0.size())};
  rg_bwd::reference<float>(d, p.a, p.b, p.h0, p.dy, p.dh_final, g.da, g.db, g.dh0);
  return g;
}

Gradients rotlru_backward(const Problem& p) {
  rot_bwd::Dims d;
  d.batch = uint32_t(p.batch);
  d.seq_len = uint32_t(p.seq_len);
  d.dim = uint32_t(p.dim);
  d.seg = uint32_t(p.seg);
  Gradients g{Tensor(p.a.size()), Tensor(p.a.size()), Tensor(p.theta.size()), Tensor(p.h0.size())};
  rot_bwd::reference<float>(d, p.a, p.b, p.theta, p.h0, p.dy, p.dh_final, g.da, g.db, g.dtheta, g.dh0);
  return g;
}

// The scalar the backward pass differentiates: sum(dy * y) + sum(dh_final * h_final).
double loss(const Problem& p, const Forward& f) { return dot(p.dy, f.y) + dot(p.dh_final, f.h_final); }

// max over elements of |central difference - grad| / max |grad|, perturbing each element of `x`
// in turn (the bound for gradients is 1e-3). The step actually taken (after rounding to
// float) divides the difference.
double central_difference_error(Tensor& x, const Tensor& grad, const std::function<double()>& loss_now) {
  const float eps = 1e-3f;
  double worst = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float saved = x[i];
    const float up = saved + eps;
    const float down = saved - eps;
    x[i] = up;
    const double l_up = loss_now();
    x[i] = down;
    const double l_down = loss_now();
    x[i] = saved;
    const double fd = (l_up - l_down) / (double(up) - double(down));
    worst = std::max(worst, std::fabs(fd - double(grad[i])));
  }
  return worst / std::max(max_abs(grad), 1e-30);
}

// ---- forward properties ----

TEST(RglruScan, TwoChunksWithTheStateCarriedEqualOneRun) {
  const Problem p = make_problem(2, 48, 64, 16, -1.1f, 1.1f, 1);
  const Forward whole = rglru_forward(p, p.a, p.b, p.h0, p.seq_len);
  const int64_t cut = 20;  // not a multiple of anything in particular
  const Forward first = rglru_forward(p, steps(p.a, 2, 48, 0, cut), steps(p.b, 2, 48, 0, cut), p.h0, cut);
  const Forward second = rglru_forward(p, steps(p.a, 2, 48, cut, 48), steps(p.b, 2, 48, cut, 48), first.h_final,
                                       48 - cut);
  // The same f32 operations in the same order: equal to the bit.
  EXPECT_EQ(join(first.y, cut, second.y, 48 - cut, 2), whole.y);
  EXPECT_EQ(second.h_final, whole.h_final);
  EXPECT_NE(first.h_final, whole.h_final);  // the carried state is a real intermediate
}

TEST(RotlruScan, TwoChunksWithTheStateCarriedEqualOneRun) {
  const Problem p = make_problem(2, 48, 96, 16, -1.1f, 1.1f, 2);
  const Forward whole = rotlru_forward(p, p.a, p.b, p.theta, p.h0, p.seq_len);
  const int64_t cut = 31;
  const Forward first =
      rotlru_forward(p, steps(p.a, 2, 48, 0, cut), steps(p.b, 2, 48, 0, cut), steps(p.theta, 2, 48, 0, cut), p.h0, cut);
  const Forward second = rotlru_forward(p, steps(p.a, 2, 48, cut, 48), steps(p.b, 2, 48, cut, 48),
                                        steps(p.theta, 2, 48, cut, 48), first.h_final, 48 - cut);
  EXPECT_EQ(join(first.y, cut, second.y, 48 - cut, 2), whole.y);
  EXPECT_EQ(second.h_final, whole.h_final);
}

TEST(RglruScan, ZeroStateForwardIsTheStatefulOneFromZero) {
  Problem p = make_problem(2, 24, 32, 8, 0.5f, 0.999f, 3);
  p.h0.assign(p.h0.size(), 0.0f);
  Tensor y(p.a.size());
  rg::Dims d;
  d.batch = 2;
  d.seq_len = 24;
  d.dim = 32;
  rg::reference<float>(d, p.a, p.b, y);
  EXPECT_EQ(y, rglru_forward(p, p.a, p.b, p.h0, p.seq_len).y);
}

TEST(RotlruScan, ZeroStateForwardIsTheStatefulOneFromZero) {
  Problem p = make_problem(2, 24, 64, 8, 0.5f, 0.999f, 4);
  p.h0.assign(p.h0.size(), 0.0f);
  Tensor y(p.a.size());
  rot::Dims d;
  d.batch = 2;
  d.seq_len = 24;
  d.dim = 64;
  rot::reference<float>(d, p.a, p.b, p.theta, y);
  EXPECT_EQ(y, rotlru_forward(p, p.a, p.b, p.theta, p.h0, p.seq_len).y);
}

TEST(RotlruScan, ThetaZeroIsRglru) {
  Problem p = make_problem(2, 40, 64, 8, -1.1f, 1.1f, 5);
  p.theta.assign(p.theta.size(), 0.0f);
  const Forward rotated = rotlru_forward(p, p.a, p.b, p.theta, p.h0, p.seq_len);
  const Forward gated = rglru_forward(p, p.a, p.b, p.h0, p.seq_len);
  EXPECT_EQ(rotated.y, gated.y);
  EXPECT_EQ(rotated.h_final, gated.h_final);
  // and so are the gradients the two backward passes share
  const Gradients gr = rotlru_backward(p);
  const Gradients gg = rglru_backward(p);
  EXPECT_EQ(gr.da, gg.da);
  EXPECT_EQ(gr.db, gg.db);
  EXPECT_EQ(gr.dh0, gg.dh0);
}

TEST(RotlruScan, UnitGatesAndNoInputPreserveEachPairsNorm) {
  Problem p = make_problem(2, 64, 32, 8, 1.0f, 1.0f, 6);
  p.a.assign(p.a.size(), 1.0f);
  p.b.assign(p.b.size(), 0.0f);
  const Forward f = rotlru_forward(p, p.a, p.b, p.theta, p.h0, p.seq_len);
  double worst = 0.0;
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t q = 0; q < p.dim / 2; ++q) {
      const double r0 = std::hypot(p.h0[n * p.dim + 2 * q], p.h0[n * p.dim + 2 * q + 1]);
      for (int64_t t = 0; t < p.seq_len; ++t) {
        const int64_t i = (n * p.seq_len + t) * p.dim + 2 * q;
        worst = std::max(worst, std::fabs(std::hypot(f.y[i], f.y[i + 1]) - r0) / r0);
      }
    }
  }
  EXPECT_LT(worst, 1e-5);  // rounding of 64 rotations in f32, not a drift
  EXPECT_GT(max_abs(f.y), 0.1);  // the states are not trivially small
}

// ---- backward references against central differences ----

struct GateRange {
  const char* name;
  float lo, hi;
};
const GateRange kGates[] = {{"decaying", 0.5f, 0.999f}, {"negative_and_growing", -1.1f, 1.1f}};

TEST(RglruScanBackward, EveryGradientMatchesCentralDifferences) {
  for (const auto& gates : kGates) {
    SCOPED_TRACE(gates.name);
    Problem p = make_problem(2, 12, 32, 4, gates.lo, gates.hi, 7);
    const Gradients g = rglru_backward(p);
    auto loss_now = [&] { return loss(p, rglru_forward(p, p.a, p.b, p.h0, p.seq_len)); };
    EXPECT_LT(central_difference_error(p.a, g.da, loss_now), 1e-3) << "da";
    EXPECT_LT(central_difference_error(p.b, g.db, loss_now), 1e-3) << "db";
    EXPECT_LT(central_difference_error(p.h0, g.dh0, loss_now), 1e-3) << "dh0";
  }
}

TEST(RotlruScanBackward, EveryGradientMatchesCentralDifferences) {
  for (const auto& gates : kGates) {
    SCOPED_TRACE(gates.name);
    Problem p = make_problem(2, 12, 32, 4, gates.lo, gates.hi, 8);
    const Gradients g = rotlru_backward(p);
    auto loss_now = [&] { return loss(p, rotlru_forward(p, p.a, p.b, p.theta, p.h0, p.seq_len)); };
    EXPECT_LT(central_difference_error(p.a, g.da, loss_now), 1e-3) << "da";
    EXPECT_LT(central_difference_error(p.b, g.db, loss_now), 1e-3) << "db";
    EXPECT_LT(central_difference_error(p.theta, g.dtheta, loss_now), 1e-3) << "dtheta";
    EXPECT_LT(central_difference_error(p.h0, g.dh0, loss_now), 1e-3) << "dh0";
  }
}

// A wrong gradient must fail the same check: the test can fail.
TEST(RglruScanBackward, CentralDifferencesCatchAWrongGradient) {
  Problem p = make_problem(2, 12, 32, 4, 0.5f, 0.999f, 9);
  Gradients g = rglru_backward(p);
  g.da[17] += 0.01f * float(max_abs(g.da));  // 1% of the gradient's scale, ten times the bound
  auto loss_now = [&] { return loss(p, rglru_forward(p, p.a, p.b, p.h0, p.seq_len)); };
  EXPECT_GT(central_difference_error(p.a, g.da, loss_now), 1e-3);
}

// ---- the checkpointed kernels' references compose to the family's ----

TEST(RglruScanBackward, CheckpointsThenSegmentsEqualTheFullHistory) {
  const Problem p = make_problem(2, 96, 64, 16, -1.1f, 1.1f, 10);
  const Gradients whole = rglru_backward(p);
  rg_ck::Dims cd;
  cd.batch = 2;
  cd.seq_len = 96;
  cd.dim = 64;
  cd.seg = 16;
  Tensor checkpoints(size_t(2 * (96 / 16) * 64));
  rg_ck::reference<float>(cd, p.a, p.b, p.h0, checkpoints);
  rg_seg::Dims sd;
  sd.batch = 2;
  sd.seq_len = 96;
  sd.dim = 64;
  sd.seg = 16;
  Gradients g{Tensor(p.a.size()), Tensor(p.a.size()), {}, Tensor(p.h0.size())};
  rg_seg::reference<float>(sd, p.a, p.b, checkpoints, p.dy, p.dh_final, g.da, g.db, g.dh0);
  EXPECT_EQ(g.da, whole.da);
  EXPECT_EQ(g.db, whole.db);
  EXPECT_EQ(g.dh0, whole.dh0);
}

TEST(RotlruScanBackward, CheckpointsThenSegmentsEqualTheFullHistory) {
  const Problem p = make_problem(1, 64, 96, 32, -1.1f, 1.1f, 11);
  const Gradients whole = rotlru_backward(p);
  rot_ck::Dims cd;
  cd.batch = 1;
  cd.seq_len = 64;
  cd.dim = 96;
  cd.seg = 32;
  Tensor checkpoints(size_t((64 / 32) * 96));
  rot_ck::reference<float>(cd, p.a, p.b, p.theta, p.h0, checkpoints);
  rot_seg::Dims sd;
  sd.batch = 1;
  sd.seq_len = 64;
  sd.dim = 96;
  sd.seg = 32;
  Gradients g{Tensor(p.a.size()), Tensor(p.a.size()), Tensor(p.theta.size()), Tensor(p.h0.size())};
  rot_seg::reference<float>(sd, p.a, p.b, p.theta, checkpoints, p.dy, p.dh_final, g.da, g.db, g.dtheta, g.dh0);
  EXPECT_EQ(g.da, whole.da);
  EXPECT_EQ(g.db, whole.db);
  EXPECT_EQ(g.dtheta, whole.dtheta);
  EXPECT_EQ(g.dh0, whole.dh0);
}

// ---- what users meet ----

// The constraint's wording, as the glue, the reference and the simulator report it.
std::string violation(const std::function<void()>& call) {
  try {
    call();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(LruScans, ShapesBreakingTheConstraintsAreRejectedNamingThem) {
  rg_bwd::Dims d;
  d.batch = 1;
  d.seq_len = 64;
  d.dim = 48;
  d.seg = 32;
  EXPECT_NE(violation([&] { rg_bwd::check_dims(d); }).find("dim % 32 == 0"), std::string::npos);
  d.dim = 64;
  d.seq_len = 50;
  EXPECT_NE(violation([&] { rg_bwd::check_dims(d); }).find("seq_len % seg == 0"), std::string::npos);
  d.seq_len = 64;
  EXPECT_EQ(violation([&] { rg_bwd::check_dims(d); }), "");

  rot_bwd::Dims r;
  r.batch = 1;
  r.seq_len = 40;
  r.dim = 64;
  r.seg = 16;
  EXPECT_NE(violation([&] { rot_bwd::check_dims(r); }).find("seq_len % seg == 0"), std::string::npos);
  rot_state::Dims f;
  f.batch = 1;
  f.seq_len = 8;
  f.dim = 80;
  EXPECT_NE(violation([&] { rot_state::check_dims(f); }).find("dim % 32 == 0"), std::string::npos);
  rg::Dims z;
  z.batch = 1;
  z.seq_len = 8;
  z.dim = 40;
  EXPECT_NE(violation([&] { rg::check_dims(z); }).find("dim % 32 == 0"), std::string::npos);

  // the reference checks before it computes
  const Problem p = make_problem(1, 50, 64, 32, 0.5f, 0.9f, 12);
  Tensor da(p.a.size()), db(p.a.size()), dh0(p.h0.size());
  rg_bwd::Dims bad;
  bad.batch = 1;
  bad.seq_len = 50;
  bad.dim = 64;
  bad.seg = 32;
  EXPECT_NE(violation([&] { rg_bwd::reference<float>(bad, p.a, p.b, p.h0, p.dy, p.dh_final, da, db, dh0); })
                .find("seq_len % seg == 0"),
            std::string::npos);
}

// The cost model states the memory the checkpoints save: 1 / seg of the full state history.
template <typename Cost, typename Quantities>
int64_t quantity(const Cost& c, const Quantities& list, const std::string& name) {
  for (const auto& q : list) {
    if (name == q.name) return c.*q.value;
  }
  ADD_FAILURE() << "no cost quantity " << name;
  return 0;
}

TEST(LruScans, CostReportsCheckpointBytesAgainstTheFullHistory) {
  rg_bwd::Dims d;
  d.batch = 3;
  d.seq_len = 512;
  d.dim = 768;
  d.seg = 32;
  const rg_bwd::Cost c = rg_bwd::cost(d);
  EXPECT_EQ(quantity(c, rg_bwd::kCostQuantities, "checkpoint_bytes"), 3 * (512 / 32) * 768 * 4);
  EXPECT_EQ(quantity(c, rg_bwd::kCostQuantities, "history_bytes"), 3 * 512 * 768 * 4);
  EXPECT_EQ(c.history_bytes / c.checkpoint_bytes, 32);

  rot_bwd::Dims r;
  r.batch = 2;
  r.seq_len = 96;
  r.dim = 1536;
  r.seg = 16;
  const rot_bwd::Cost rc = rot_bwd::cost(r);
  EXPECT_EQ(quantity(rc, rot_bwd::kCostQuantities, "checkpoint_bytes"), 2 * (96 / 16) * 1536 * 4);
  EXPECT_EQ(rc.history_bytes / rc.checkpoint_bytes, 16);
}

}  // namespace
