// Poison that decides something: comparisons and float-to-integer conversions that the compiler's
// instrumentation reports (mtlsim/poison_hooks.h), checked against the dispatch's poison patterns
// and kept per kind and instruction (DispatchResult::poison_uses).
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <utility>

#include "worker.h"

namespace mtlsim {

const char* to_string(PoisonUse::Kind kind) noexcept {
  switch (kind) {
    case PoisonUse::Kind::branch: return "poison_in_branch";
    case PoisonUse::Kind::index: return "poison_in_index";
    case PoisonUse::Kind::private_read: return "uninitialised_private_read";
  }
  return "?";
}

std::string describe(const PoisonUse& use, const std::string& kernel_name, const std::string& where) {
  const std::string head = fmt::format("{}: kernel '{}': thread {} of threadgroup {}", to_string(use.kind),
                                       kernel_name.empty() ? "<unnamed>" : kernel_name, use.thread_index,
                                       detail::format_dim(use.threadgroup_position));
  const std::string times = use.occurrences > 1 ? fmt::format(", {} times in this run", use.occurrences) : "";
  if (use.kind == PoisonUse::Kind::private_read) {
    return fmt::format("{} used the value of a private (thread) variable that it never wrote{}{}: the comparison or "
                       "conversion to an integer there reads the simulator's fill of uninitialised private memory "
                       "(0x{:X}, -1.7e38 as a float), where a GPU leaves whatever its registers held. Initialise the "
                       "variable where it is declared, or write it on every path that reaches this line.",
                       head, where, times, use.bits);
  }
  const char* fix = "A thread read threadgroup memory that no thread had written, directly or through a simd "
                    "function that handed it on: look for a missing threadgroup_barrier between the writes and "
                    "the read, or an index beyond the written range.";
  if (use.kind == PoisonUse::Kind::branch) {
    return fmt::format("{} compared uninitialised threadgroup memory (poison 0x{:X}){}{}: what that comparison "
                       "decides (a branch, a select, a bool) depends on what the memory held. {}",
                       head, use.bits, where, times, fix);
  }
  return fmt::format("{} converted uninitialised threadgroup memory (poison NaN 0x{:X}) to a {}-bit {} integer{}{}: "
                     "the integer is meaningless, and an index or address made from it points wherever that "
                     "memory's bits send it. {}",
                     head, use.bits, use.integer_bits, use.integer_signed ? "signed" : "unsigned", where, times, fix);
}

}  // namespace mtlsim

namespace mtlsim::detail {
namespace {

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// A half NaN widened to float, as a conversion does it: the payload moves to the top.
uint32_t widened_f16(uint16_t h) {
  return uint32_t(h & 0x8000u) << 16 | 0x7F800000u | uint32_t(h & 0x3FFu) << 13;
}

// The bounds g++'s float-cast-overflow check compares a value with before converting it to an
// integer of `bits`: the largest float at or below min - 1, and max + 1.
std::pair<uint32_t, uint32_t> range_check_bounds(uint32_t bits, bool is_signed) {
  const long double min = is_signed ? -std::ldexp(1.0L, int(bits) - 1) : 0.0L;
  const long double max = std::ldexp(1.0L, int(bits) - (is_signed ? 1 : 0)) - 1;
  float lo = float(min - 1);
  if (static_cast<long double>(lo) > min - 1) lo = std::nextafter(lo, -INFINITY);
  return {bits_of(lo), bits_of(float(max + 1))};
}

// -ftrivial-auto-var-init=pattern's bytes (mtlsim/poison_hooks.h).
constexpr uint32_t kPrivatePattern = 0xFEFEFEFEu;

PoisonUse::Kind branch_kind(uint32_t bits) {
  return bits == kPrivatePattern ? PoisonUse::Kind::private_read : PoisonUse::Kind::branch;
}

}  // namespace

// `bits` of a float of `float_bits`: one of the dispatch's poison patterns, or (as a float) a
// half or bfloat poison widened.
bool Worker::is_poison(uint32_t bits, uint32_t float_bits) const {
  const PoisonSet& ps = job_->poison;
  for (int k = 0; k < ps.n16; ++k)
    if (bits == (float_bits == 16 ? ps.f16[k] : widened_f16(ps.f16[k]))) return true;
  if (float_bits == 16) return false;
  for (int k = 0; k < ps.n32; ++k)
    if (bits == ps.f32[k]) return true;
  for (int k = 0; k < ps.nbf16; ++k)
    if (bits == uint32_t(ps.bf16[k]) << 16) return true;
  return false;
}

void Worker::poison_compared(uint32_t bits, uint32_t other, uintptr_t pc) {
  if (hooks_muted_ || !(is_poison(bits, 32) || bits == kPrivatePattern)) return;
  const uint32_t thread = tls_lane->index;
  size_t mine = 0, oldest = 0;
  for (size_t i = pending_compares_.size(); i-- > 0;) {
    if (pending_compares_[i].thread != thread) continue;
    ++mine;
    oldest = i;
  }
  if (mine == 2) {
    const PendingCompare p = pending_compares_[oldest];
    pending_compares_.erase(pending_compares_.begin() + std::ptrdiff_t(oldest));
    add_poison_use({branch_kind(p.bits), p.pc, tg_position_, p.thread, p.bits});
  }
  pending_compares_.push_back({thread, bits, other, pc});
}

// The lane's waiting comparisons against the integer type's bounds were this conversion's range
// check; the others were its own.
void Worker::poison_converted(uint32_t bits, uint32_t float_bits, uint32_t int_bits, bool int_signed, uintptr_t pc) {
  const bool private_read = float_bits == 32 && bits == kPrivatePattern;
  if (hooks_muted_ || !(private_read || is_poison(bits, float_bits))) return;
  const uint32_t thread = tls_lane->index;
  const auto [lo, hi] = range_check_bounds(int_bits, int_signed);
  std::erase_if(pending_compares_, [&](const PendingCompare& p) {
    return p.thread == thread && (p.other == lo || p.other == hi);
  });
  commit_compares(thread, false);
  add_poison_use({private_read ? PoisonUse::Kind::private_read : PoisonUse::Kind::index, pc, tg_position_, thread, bits,
                  int_bits, int_signed});
}

void Worker::commit_compares(uint32_t thread, bool all_threads) {
  std::erase_if(pending_compares_, [&](const PendingCompare& p) {
    if (!all_threads && p.thread != thread) return false;
    add_poison_use({branch_kind(p.bits), p.pc, tg_position_, p.thread, p.bits});
    return true;
  });
}

void Worker::add_poison_use(const PoisonUse& use) { job_->sink.add_poison_use(use); }

}  // namespace mtlsim::detail
