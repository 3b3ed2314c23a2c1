// Barriers and simd-group functions. Each call is a rendezvous of fibers: a lane deposits
// its input in its simdgroup's slot, then blocks in the runtime; the last active lane to
// arrive (or to return, leaving only arrived lanes active) runs the type-specific CompleteFn
// below, which writes every lane's result.
// Every entry point takes `int line = __builtin_LINE()`, the caller's source line, so
// divergence and poison reports name the kernel line.
//
// Semantics over the 32 lanes of a simdgroup:
// - "active" lanes are those that have not returned from the kernel (as on hardware).
//   Lanes that are merely on another code path are NOT treated as inactive: if they wait
//   at a different collective or at a barrier, that is reported as simd_divergence.
// - Shuffles whose source lane is out of range or inactive return the caller's own value.
// - simd_max/simd_min on floats use fmax/fmin semantics: NaN inputs are ignored unless all
//   inputs are NaN. Reductions and prefix sums combine lanes in ascending lane order.
#pragma once
#pragma GCC system_header

#include <cstring>
#include <new>

#include "mtlsim/counter_hooks.h"
#include "mtlsim/exec.h"
#include "mtlsim/msl_math.h"

namespace metal {

enum mem_flags : uint32_t {
  mem_none = 0,
  mem_device = 1,
  mem_threadgroup = 2,
  mem_texture = 4,
  mem_threadgroup_imageblock = 8,
  mem_object_data = 16,
};
constexpr mem_flags operator|(mem_flags a, mem_flags b) { return mem_flags(uint32_t(a) | uint32_t(b)); }
constexpr mem_flags operator&(mem_flags a, mem_flags b) { return mem_flags(uint32_t(a) & uint32_t(b)); }

// Metal's simd_vote: one bit per lane. all()/any() consider the lanes active at the ballot.
class simd_vote {
 public:
  using vote_t = uint64_t;
  constexpr simd_vote() = default;
  constexpr explicit simd_vote(vote_t v, vote_t active = 0xffffffffu) : v_(v), active_(active) {}
  constexpr explicit operator vote_t() const { return v_; }
  constexpr bool all() const { return (v_ & active_) == active_; }
  constexpr bool any() const { return v_ != 0; }

 private:
  vote_t v_ = 0, active_ = 0;
};

}  // namespace metal

namespace mtlsim::detail {

template <class T>
struct elem_of { using type = T; };
template <class T, int N>
struct elem_of<metal::vec<T, N>> { using type = T; };

// A lane's two inputs to simd_shuffle_and_fill_*; checked for poison like two values of T.
template <class T>
struct FillPair {
  T data, fill;
};
template <class T>
struct elem_of<FillPair<T>> { using type = typename elem_of<T>::type; };

template <class T>
inline constexpr bool is_poisonable_v = metal::is_msl_float_v<typename elem_of<T>::type>;

// Bits of the first element of v that equals a poison pattern for its float type; 0 if none.
template <class T>
inline uint32_t poison_bits(const T& v, const PoisonSet& ps) {
  using E = typename elem_of<T>::type;
  constexpr int n = sizeof(T) / sizeof(E);
  E e[n];
  std::memcpy(e, &v, sizeof e);
  for (int i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<E, float>) {
      const uint32_t b = __builtin_bit_cast(uint32_t, e[i]);
      for (int k = 0; k < ps.n32; ++k) if (b == ps.f32[k]) return b;
    } else if constexpr (std::is_same_v<E, _Float16>) {
      const uint16_t b = __builtin_bit_cast(uint16_t, e[i]);
      for (int k = 0; k < ps.n16; ++k) if (b == ps.f16[k]) return b;
    } else if constexpr (std::is_same_v<E, metal::bfloat>) {
      for (int k = 0; k < ps.nbf16; ++k) if (e[i].bits == ps.bf16[k]) return e[i].bits;
    }
  }
  return 0;
}

template <class T>
inline bool has_nan(const T& v) {
  using E = typename elem_of<T>::type;
  constexpr int n = sizeof(T) / sizeof(E);
  E e[n];
  std::memcpy(e, &v, sizeof e);
  bool nan = false;
  for (int i = 0; i < n; ++i) nan |= float(e[i]) != float(e[i]);
  return nan;
}

// Poison patterns are NaNs, so a cheap NaN sweep over all lanes comes first.
template <class T>
inline PoisonHit find_poison(const T* in, uint32_t arrived, const PoisonSet& ps) {
  if constexpr (std::is_same_v<T, float>) {  // the common case, no NaN at all: one vectorised pass
    uint32_t bits[kSimdWidth], any = 0;
    std::memcpy(bits, in, sizeof bits);
    for (uint32_t l = 0; l < kSimdWidth; ++l) any |= uint32_t((bits[l] & 0x7fffffffu) > 0x7f800000u);
    if (any == 0) return PoisonHit{};
  }
  uint32_t nans = 0;
  for (uint32_t l = 0; l < kSimdWidth; ++l) nans |= uint32_t(has_nan(in[l])) << l;
  for (uint32_t m = nans & arrived; m; m &= m - 1) {
    const int l = __builtin_ctz(m);
    if (const uint32_t b = poison_bits(in[l], ps)) return PoisonHit{l, b};
  }
  return PoisonHit{};
}

// v with every element that holds a poison pattern replaced by `with`.
template <class T>
inline T replace_poison(T v, const PoisonSet& ps, float with) {
  using E = typename elem_of<T>::type;
  constexpr int n = sizeof(T) / sizeof(E);
  E e[n];
  std::memcpy(e, &v, sizeof e);
  for (int i = 0; i < n; ++i)
    if (poison_bits(e[i], ps)) e[i] = E(with);
  std::memcpy(&v, e, sizeof e);
  return v;
}

// Every element of r set to the poison pattern `bits` (of the element type's width).
template <class R>
inline void fill_poison(R& r, uint32_t bits) {
  using E = typename elem_of<R>::type;
  constexpr int n = sizeof(R) / sizeof(E);
  E e[n];
  for (int i = 0; i < n; ++i) std::memcpy(&e[i], &bits, sizeof(E));  // little-endian: the low bytes
  std::memcpy(&r, e, sizeof e);
}

// The arrived lanes whose result depends on a poisoned input: those whose result changes when the
// poison reads +inf instead of -inf (this also catches fmax/fmin, which would swallow the NaN), or
// that received the poison itself. Their results become poison, so that a later use (an output,
// another collective) still shows it; the other lanes keep their exact results. Runs only when
// some input is poison.
template <class T, class R, class Policy>
uint32_t taint(const T* in, R* out, const SimdGroup& sg, const PoisonSet& ps, uint32_t bits) {
  T hi[kSimdWidth], lo[kSimdWidth];
  R out_hi[kSimdWidth], out_lo[kSimdWidth];
  for (uint32_t l = 0; l < kSimdWidth; ++l) {
    hi[l] = replace_poison(in[l], ps, __builtin_inff());
    lo[l] = replace_poison(in[l], ps, -__builtin_inff());
  }
  Policy::run(hi, out_hi, sg.arg, sg.arrived);
  Policy::run(lo, out_lo, sg.arg, sg.arrived);
  uint32_t tainted = 0;
  for (uint32_t m = sg.arrived; m; m &= m - 1) {
    const int l = __builtin_ctz(m);
    if (std::memcmp(&out_hi[l], &out_lo[l], sizeof(R)) == 0 && !poison_bits(out[l], ps)) continue;
    tainted |= 1u << l;
    fill_poison(out[l], bits);
  }
  return tainted;
}

// The shared CompleteFn: load the inputs, let Policy compute, follow any poison to the lanes
// whose results it reaches. Policy::run(const T* in, R* out, const uint32_t* arg, uint32_t arrived)
// writes out[lane] for every arrived lane; slots of other lanes are copied but never read.
template <class T, class R, class Policy>
PoisonHit complete_collective(SimdGroup& sg, const PoisonSet& ps) {
  // In place: the slots hold a T (R) per lane, packed (SimdGroup, mtlsim/exec.h); copying them to
  // the stack and back was most of a completion's time.
  const T* in = std::launder(reinterpret_cast<const T*>(sg.in));
  R* out = std::launder(reinterpret_cast<R*>(sg.out));
  MTLSIM_COUNT_SIMD(sg.op, sg.line, uint32_t(__builtin_popcount(sg.arrived)));
  Policy::run(in, out, sg.arg, sg.arrived);
  PoisonHit hit{};
  if constexpr (is_poisonable_v<T> && is_poisonable_v<R>) {
    hit = find_poison(in, sg.arrived, ps);
    if (hit.lane >= 0) hit.tainted = taint<T, R, Policy>(in, out, sg, ps, hit.bits);
  }
  return hit;
}

// A policy that never reads the per-lane operand (sg.arg) says so with `static constexpr bool
// kIgnoresArg = true`: the loop form's arrivals then do not store it.
template <class Policy>
concept ignores_arg = requires { requires Policy::kIgnoresArg; };

template <class T, class R, class Policy>
inline R simd_collective(Op op, const T& v, uint32_t arg, int line) {
  static_assert(sizeof(T) <= kSlotBytes && sizeof(R) <= kSlotBytes, "simd payload too large");
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_copyable_v<R>);
  Lane& me = current_lane(op, line);
  // Read before the copy below, which may alias them (it stores bytes).
  SimdGroup& sg = *me.simd;
  const uint32_t lane = me.lane;
  const bool inline_arrival = tls_arrivals != nullptr;
  std::memcpy(sg.in + lane * sizeof(T), &v, sizeof(T));
  if (inline_arrival) {  // the loop form: the next region reads the result (mtlsim::loops::result)
    if constexpr (!ignores_arg<Policy>) sg.arg[lane] = arg;
    arrive_simd(sg, op, line, &complete_collective<T, R, Policy>);
    return R{};
  }
  sg.arg[lane] = arg;  // the race detector's simdgroup_barrier reads every policy's
  simd_rendezvous(me, op, line, &complete_collective<T, R, Policy>);
  R r;
  std::memcpy(&r, sg.out + me.lane * sizeof(R), sizeof(R));
  return r;
}

// ---- policies ----
struct Plus { template <class T> static T apply(const T& a, const T& b) { return T(a + b); } };
struct Times { template <class T> static T apply(const T& a, const T& b) { return T(a * b); } };
struct Min { template <class T> static T apply(const T& a, const T& b) { return metal::fmin(a, b); } };
struct Max { template <class T> static T apply(const T& a, const T& b) { return metal::fmax(a, b); } };
// Bitwise reductions of floats (Apple's __metal_simd_xor takes them, MLX's bf16 simd_xor calls it)
// combine the bit patterns.
template <class T, class F>
inline T bitwise(const T& a, const T& b, F f) {
  using E = typename elem_of<T>::type;
  if constexpr (metal::is_msl_int_v<E> || std::is_same_v<E, bool>) {
    return T(f(a, b));
  } else {
    using U = std::conditional_t<sizeof(E) == 4, uint32_t, uint16_t>;
    constexpr int n = sizeof(T) / sizeof(E);
    U x[n], y[n];
    std::memcpy(x, &a, sizeof x);
    std::memcpy(y, &b, sizeof y);
    for (int i = 0; i < n; ++i) x[i] = U(f(x[i], y[i]));
    T r;
    std::memcpy(&r, x, sizeof x);
    return r;
  }
}
struct And { template <class T> static T apply(const T& a, const T& b) { return bitwise(a, b, [](auto x, auto y) { return x & y; }); } };
struct Or { template <class T> static T apply(const T& a, const T& b) { return bitwise(a, b, [](auto x, auto y) { return x | y; }); } };
struct Xor { template <class T> static T apply(const T& a, const T& b) { return bitwise(a, b, [](auto x, auto y) { return x ^ y; }); } };

// Lanes of group g (W = 32: the simdgroup; W = 4: quad g) as a bit mask.
template <uint32_t W>
constexpr uint32_t group_mask(uint32_t g) {
  return W == kSimdWidth ? ~0u : ((1u << W) - 1) << (g * W);
}

template <class Combine, uint32_t W = kSimdWidth>
struct Reduce {
  static constexpr bool kIgnoresArg = true;
  // One level of the tree into a fresh array: a constant trip count and no aliasing, so g++
  // vectorises it and keeps the levels in registers.
  template <uint32_t Half, class T>
  [[gnu::always_inline]] static void fold(const T* in, T* out) {
    for (uint32_t l = 0; l < Half; ++l) out[l] = Combine::apply(in[l], in[l + Half]);
  }
  template <class T>
  static void run(const T* in, T* out, const uint32_t*, uint32_t arrived) {
    if (W == kSimdWidth && arrived == ~0u) {
      // A full simdgroup combines as a shuffle-down tree does (lane l with lane l + 16, then + 8,
      // ...), as GPUs reduce: each level's combines are independent, so they run as vector
      // instructions rather than as a chain of 31 dependent ones.
      T l16[16], l8[8], l4[4], l2[2];
      fold<16>(in, l16), fold<8>(l16, l8), fold<4>(l8, l4), fold<2>(l4, l2);
      const T sum = Combine::apply(l2[0], l2[1]);
      for (uint32_t l = 0; l < kSimdWidth; ++l) out[l] = sum;
      return;
    }
    for (uint32_t g = 0; g < kSimdWidth / W; ++g) {
      const uint32_t lanes = arrived & group_mask<W>(g);
      if (lanes == 0) continue;
      T acc = in[__builtin_ctz(lanes)];
      for (uint32_t m = lanes & (lanes - 1); m; m &= m - 1) acc = Combine::apply(acc, in[__builtin_ctz(m)]);
      for (uint32_t m = lanes; m; m &= m - 1) out[__builtin_ctz(m)] = acc;
    }
  }
};

template <class Combine, bool Inclusive, int Identity, uint32_t W = kSimdWidth>
struct Prefix {
  template <class T>
  static void run(const T* in, T* out, const uint32_t*, uint32_t arrived) {
    for (uint32_t g = 0; g < kSimdWidth / W; ++g) {
      T acc = T(Identity);
      for (uint32_t m = arrived & group_mask<W>(g); m; m &= m - 1) {
        const int l = __builtin_ctz(m);
        if (Inclusive) acc = Combine::apply(acc, in[l]);
        out[l] = acc;
        if (!Inclusive) acc = Combine::apply(acc, in[l]);
      }
    }
  }
};

template <uint32_t W = kSimdWidth>
using PrefixInclusiveSum = Prefix<Plus, true, 0, W>;
template <uint32_t W = kSimdWidth>
using PrefixExclusiveSum = Prefix<Plus, false, 0, W>;
template <uint32_t W = kSimdWidth>
using PrefixInclusiveProduct = Prefix<Times, true, 1, W>;
template <uint32_t W = kSimdWidth>
using PrefixExclusiveProduct = Prefix<Times, false, 1, W>;

// Source lane for lane l of a group of W lanes, given the per-lane operand: its index in the
// group, or out of [0, W) (the caller keeps its own value).
struct SrcAbsolute { static int src(int, uint32_t a, uint32_t) { return int(a); } };
struct SrcDown { static int src(int i, uint32_t a, uint32_t) { return i + int(a); } };
struct SrcUp { static int src(int i, uint32_t a, uint32_t) { return i - int(a); } };
struct SrcXor { static int src(int i, uint32_t a, uint32_t) { return i ^ int(a); } };
struct SrcRotDown { static int src(int i, uint32_t a, uint32_t w) { return int((uint32_t(i) + a) % w); } };
struct SrcRotUp { static int src(int i, uint32_t a, uint32_t w) { return int((uint32_t(i) + w - a % w) % w); } };

template <class Src, uint32_t W = kSimdWidth>
struct Shuffle {
  template <class T>
  static void run(const T* in, T* out, const uint32_t* arg, uint32_t arrived) {
    for (uint32_t m = arrived; m; m &= m - 1) {
      const int l = __builtin_ctz(m), base = l - l % int(W);
      const int s = Src::src(l - base, arg[l], W);
      const bool ok = s >= 0 && s < int(W) && (arrived >> (base + s) & 1u);
      out[l] = ok ? in[base + s] : in[l];
    }
  }
};

// simd_shuffle_and_fill_down/up: arg = delta | modulo << 16 (modulo 0: the group). Within each
// segment of `modulo` lanes, lane i takes data from lane i + delta (down) or i - delta (up) of
// its segment; positions past the segment's end (start) take `fill` from the segment's first
// (last) lanes. An inactive source lane yields the caller's own data.
template <bool Down, uint32_t W = kSimdWidth>
struct ShuffleAndFill {
  template <class T>
  static void run(const FillPair<T>* in, T* out, const uint32_t* arg, uint32_t arrived) {
    for (uint32_t m = arrived; m; m &= m - 1) {
      const int l = __builtin_ctz(m), delta = int(arg[l] & 0xffffu);
      const int seg = (arg[l] >> 16) == 0 || (arg[l] >> 16) > W ? int(W) : int(arg[l] >> 16);
      const int base = l - l % seg, i = l - base;
      const int j = Down ? i + delta : i - delta;
      const bool from_data = j >= 0 && j < seg;
      const int s = base + (from_data ? j : Down ? j - seg : j + seg);
      const bool ok = s >= base && s < base + seg && (arrived >> s & 1u);
      out[l] = !ok ? in[l].data : from_data ? in[s].data : in[s].fill;
    }
  }
};

template <uint32_t W = kSimdWidth>
struct BroadcastFirst {
  template <class T>
  static void run(const T* in, T* out, const uint32_t*, uint32_t arrived) {
    for (uint32_t g = 0; g < kSimdWidth / W; ++g) {
      const uint32_t lanes = arrived & group_mask<W>(g);
      if (lanes == 0) continue;
      const T first = in[__builtin_ctz(lanes)];
      for (uint32_t m = lanes; m; m &= m - 1) out[__builtin_ctz(m)] = first;
    }
  }
};

// Votes: input bool, output as given.
struct Vote {
  static uint32_t ballot(const bool* in, uint32_t arrived) {
    uint32_t v = 0;
    for (uint32_t m = arrived; m; m &= m - 1) v |= in[__builtin_ctz(m)] ? (m & -m) : 0u;
    return v;
  }
};
template <uint32_t W = kSimdWidth>
struct AnyPolicy {
  static void run(const bool* in, bool* out, const uint32_t*, uint32_t arrived) {
    for (uint32_t g = 0; g < kSimdWidth / W; ++g) {
      const uint32_t lanes = arrived & group_mask<W>(g);
      const bool r = Vote::ballot(in, lanes) != 0;
      for (uint32_t m = lanes; m; m &= m - 1) out[__builtin_ctz(m)] = r;
    }
  }
};
template <uint32_t W = kSimdWidth>
struct AllPolicy {
  static void run(const bool* in, bool* out, const uint32_t*, uint32_t arrived) {
    for (uint32_t g = 0; g < kSimdWidth / W; ++g) {
      const uint32_t lanes = arrived & group_mask<W>(g);
      const bool r = Vote::ballot(in, lanes) == lanes;
      for (uint32_t m = lanes; m; m &= m - 1) out[__builtin_ctz(m)] = r;
    }
  }
};
struct BallotPolicy {
  static void run(const bool* in, metal::simd_vote* out, const uint32_t*, uint32_t arrived) {
    const metal::simd_vote r(Vote::ballot(in, arrived), arrived);
    for (uint32_t m = arrived; m; m &= m - 1) out[__builtin_ctz(m)] = r;
  }
};
struct IsFirstPolicy {
  static void run(const bool*, bool* out, const uint32_t*, uint32_t arrived) {
    const int first = __builtin_ctz(arrived);
    for (uint32_t m = arrived; m; m &= m - 1) out[__builtin_ctz(m)] = __builtin_ctz(m) == first;
  }
};
struct NoData {
  static void run(const bool*, bool*, const uint32_t*, uint32_t) {}
};

inline constexpr uint32_t kQuadWidth = 4;
#define MTLSIM_COMMA ,

template <class T>
concept simd_value = (metal::msl_scalar<T> || metal::is_vec_v<T>) && sizeof(T) <= kSlotBytes;

}  // namespace mtlsim::detail

namespace metal {

inline void threadgroup_barrier(mem_flags flags = mem_none, int line = __builtin_LINE()) {
  using namespace mtlsim::detail;
  MTLSIM_COUNT_BARRIER(line);
  Lane& me = current_lane(Op::threadgroup_barrier, line);
  if (Arrivals* a = tls_arrivals) return arrive_barrier(*a, line);  // mem_flags: for the race detector only
  threadgroup_barrier(me, line, uint32_t(flags));
}
inline void simdgroup_barrier(mem_flags flags = mem_none, int line = __builtin_LINE()) {
  using namespace mtlsim::detail;
  simd_collective<bool, bool, NoData>(Op::simdgroup_barrier, false, uint32_t(flags), line);
}

#define MTLSIM_SIMD_UNARY(name, policy)                                                       \
  template <mtlsim::detail::simd_value T>                                                     \
  inline T name(T v, int line = __builtin_LINE()) {                                           \
    using namespace mtlsim::detail;                                                           \
    return simd_collective<T, T, policy>(Op::name, v, 0, line);                               \
  }
MTLSIM_SIMD_UNARY(simd_sum, Reduce<Plus>)
MTLSIM_SIMD_UNARY(simd_product, Reduce<Times>)
MTLSIM_SIMD_UNARY(simd_min, Reduce<Min>)
MTLSIM_SIMD_UNARY(simd_max, Reduce<Max>)
MTLSIM_SIMD_UNARY(simd_and, Reduce<And>)
MTLSIM_SIMD_UNARY(simd_or, Reduce<Or>)
MTLSIM_SIMD_UNARY(simd_xor, Reduce<Xor>)
MTLSIM_SIMD_UNARY(simd_broadcast_first, BroadcastFirst<>)
MTLSIM_SIMD_UNARY(simd_prefix_inclusive_sum, PrefixInclusiveSum<>)
MTLSIM_SIMD_UNARY(simd_prefix_exclusive_sum, PrefixExclusiveSum<>)
MTLSIM_SIMD_UNARY(simd_prefix_inclusive_product, PrefixInclusiveProduct<>)
MTLSIM_SIMD_UNARY(simd_prefix_exclusive_product, PrefixExclusiveProduct<>)
// Quad functions work within each quad (4 consecutive lanes). They meet, like simd functions,
// as a rendezvous of the whole simdgroup: every active lane must call the same one.
MTLSIM_SIMD_UNARY(quad_sum, Reduce<Plus MTLSIM_COMMA kQuadWidth>)
MTLSIM_SIMD_UNARY(quad_product, Reduce<Times MTLSIM_COMMA kQuadWidth>)
MTLSIM_SIMD_UNARY(quad_min, Reduce<Min MTLSIM_COMMA kQuadWidth>)
MTLSIM_SIMD_UNARY(quad_max, Reduce<Max MTLSIM_COMMA kQuadWidth>)
MTLSIM_SIMD_UNARY(quad_and, Reduce<And MTLSIM_COMMA kQuadWidth>)
MTLSIM_SIMD_UNARY(quad_or, Reduce<Or MTLSIM_COMMA kQuadWidth>)
MTLSIM_SIMD_UNARY(quad_xor, Reduce<Xor MTLSIM_COMMA kQuadWidth>)
MTLSIM_SIMD_UNARY(quad_broadcast_first, BroadcastFirst<kQuadWidth>)
MTLSIM_SIMD_UNARY(quad_prefix_inclusive_sum, PrefixInclusiveSum<kQuadWidth>)
MTLSIM_SIMD_UNARY(quad_prefix_exclusive_sum, PrefixExclusiveSum<kQuadWidth>)
MTLSIM_SIMD_UNARY(quad_prefix_inclusive_product, PrefixInclusiveProduct<kQuadWidth>)
MTLSIM_SIMD_UNARY(quad_prefix_exclusive_product, PrefixExclusiveProduct<kQuadWidth>)
#undef MTLSIM_SIMD_UNARY

#define MTLSIM_SIMD_SHUFFLE(name, src)                                                        \
  template <mtlsim::detail::simd_value T>                                                     \
  inline T name(T v, ushort operand, int line = __builtin_LINE()) {                           \
    using namespace mtlsim::detail;                                                           \
    return simd_collective<T, T, Shuffle<src>>(Op::name, v, operand, line);                   \
  }
MTLSIM_SIMD_SHUFFLE(simd_shuffle, SrcAbsolute)
MTLSIM_SIMD_SHUFFLE(simd_broadcast, SrcAbsolute)
MTLSIM_SIMD_SHUFFLE(simd_shuffle_down, SrcDown)
MTLSIM_SIMD_SHUFFLE(simd_shuffle_up, SrcUp)
MTLSIM_SIMD_SHUFFLE(simd_shuffle_xor, SrcXor)
MTLSIM_SIMD_SHUFFLE(simd_shuffle_rotate_down, SrcRotDown)
MTLSIM_SIMD_SHUFFLE(simd_shuffle_rotate_up, SrcRotUp)
MTLSIM_SIMD_SHUFFLE(quad_shuffle, SrcAbsolute MTLSIM_COMMA kQuadWidth)
MTLSIM_SIMD_SHUFFLE(quad_broadcast, SrcAbsolute MTLSIM_COMMA kQuadWidth)
MTLSIM_SIMD_SHUFFLE(quad_shuffle_down, SrcDown MTLSIM_COMMA kQuadWidth)
MTLSIM_SIMD_SHUFFLE(quad_shuffle_up, SrcUp MTLSIM_COMMA kQuadWidth)
MTLSIM_SIMD_SHUFFLE(quad_shuffle_xor, SrcXor MTLSIM_COMMA kQuadWidth)
MTLSIM_SIMD_SHUFFLE(quad_shuffle_rotate_down, SrcRotDown MTLSIM_COMMA kQuadWidth)
MTLSIM_SIMD_SHUFFLE(quad_shuffle_rotate_up, SrcRotUp MTLSIM_COMMA kQuadWidth)
#undef MTLSIM_SIMD_SHUFFLE

// simd_shuffle_and_fill_down(data, filling_data, delta[, modulo]) and _up, and their quad_ twins.
#define MTLSIM_SHUFFLE_AND_FILL(name, down, width)                                                       \
  template <mtlsim::detail::simd_value T>                                                                \
    requires(sizeof(T) * 2 <= mtlsim::detail::kSlotBytes)                                                \
  inline T name(T data, T filling_data, ushort delta, ushort modulo = 0, int line = __builtin_LINE()) { \
    using namespace mtlsim::detail;                                                                      \
    return simd_collective<FillPair<T>, T, ShuffleAndFill<down, width>>(                                 \
        Op::name, FillPair<T>{data, filling_data}, uint32_t(delta) | uint32_t(modulo) << 16, line);      \
  }
MTLSIM_SHUFFLE_AND_FILL(simd_shuffle_and_fill_down, true, mtlsim::kSimdWidth)
MTLSIM_SHUFFLE_AND_FILL(simd_shuffle_and_fill_up, false, mtlsim::kSimdWidth)
MTLSIM_SHUFFLE_AND_FILL(quad_shuffle_and_fill_down, true, mtlsim::detail::kQuadWidth)
MTLSIM_SHUFFLE_AND_FILL(quad_shuffle_and_fill_up, false, mtlsim::detail::kQuadWidth)
#undef MTLSIM_SHUFFLE_AND_FILL
#undef MTLSIM_COMMA

inline bool simd_any(bool v, int line = __builtin_LINE()) {
  using namespace mtlsim::detail;
  return simd_collective<bool, bool, AnyPolicy<>>(Op::simd_any, v, 0, line);
}
inline bool simd_all(bool v, int line = __builtin_LINE()) {
  using namespace mtlsim::detail;
  return simd_collective<bool, bool, AllPolicy<>>(Op::simd_all, v, 0, line);
}
inline bool quad_any(bool v, int line = __builtin_LINE()) {
  using namespace mtlsim::detail;
  return simd_collective<bool, bool, AnyPolicy<kQuadWidth>>(Op::quad_any, v, 0, line);
}
inline bool quad_all(bool v, int line = __builtin_LINE()) {
  using namespace mtlsim::detail;
  return simd_collective<bool, bool, AllPolicy<kQuadWidth>>(Op::quad_all, v, 0, line);
}
inline simd_vote simd_ballot(bool v, int line = __builtin_LINE()) {
  using namespace mtlsim::detail;
  return simd_collective<bool, simd_vote, BallotPolicy>(Op::simd_ballot, v, 0, line);
}
inline simd_vote simd_active_threads_mask(int line = __builtin_LINE()) {
  using namespace mtlsim::detail;
  return simd_collective<bool, simd_vote, BallotPolicy>(Op::simd_active_threads_mask, true, 0, line);
}
inline bool simd_is_first(int line = __builtin_LINE()) {
  using namespace mtlsim::detail;
  return simd_collective<bool, bool, IsFirstPolicy>(Op::simd_is_first, false, 0, line);
}

}  // namespace metal
