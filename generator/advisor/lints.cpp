#include "advisor/lints.h"

#include <fmt/format.h>

#include <algorithm>
#include <regex>
#include <sstream>

namespace mtlgen::advisor {

namespace {

const Chip& reference_chip() { return chip_named("M3 Max"); }  // where the seeds were measured

// The spec line of the first reduction in the body (a simd_ or tg_ reduction, or an argmax
// combine across lanes); the body's first line when the body has none or is hand-written.
support::SourceLoc reduction_line(const ir::Kernel& k, bool& found) {
  static const std::regex call(R"(\b(simd_(sum|max|min|prefix_\w+|shuffle_down|shuffle_xor)|tg_(sum|max|min|argmax))\b)");
  found = false;
  if (k.is_source()) return {k.source->file, 1, 1};
  std::istringstream in(k.body.text);
  int offset = 0;
  for (std::string line; std::getline(in, line); ++offset) {
    if (std::regex_search(line, call)) {
      found = true;
      return {k.spec_path, k.body.loc.line + offset, 1};
    }
  }
  return {k.spec_path, k.body.loc.line, 1};
}

// Elements of the largest input buffer at the case.
int64_t input_elements(const ir::Kernel& k, const ir::Variant& v, const ir::TestCase& t) {
  const expr::Env env = ir::Kernel::env_for(t.dims, v);
  int64_t most = 0;
  for (const auto& b : k.buffers) {
    if (b.access != ir::Access::write) most = std::max(most, b.elements(env));
  }
  return most;
}

support::SourceLoc site_loc(const ir::Kernel& k, int spec_line) {
  return {k.is_source() ? k.source->file : k.spec_path, spec_line, 1};
}

std::optional<Finding> one_simdgroup_reduction(const ir::Kernel& k, const Point& p, const ir::TestCase& t) {
  const Workload& w = p.workload;
  bool reduces = false;
  support::SourceLoc at = reduction_line(k, reduces);
  if (!reduces || w.threads_per_threadgroup > 32) return std::nullopt;
  const double per_group = double(input_elements(k, *p.variant, t)) / double(w.threadgroups);
  const double per_lane = per_group / double(w.threads_per_threadgroup);
  if (per_lane < kReductionElementsPerLane) return std::nullopt;
  const Prediction predicted = predict(w, reference_chip());
  return Finding{"reduction-one-simdgroup", k.name, p.variant->entry_point, at,
                 fmt::format("one simdgroup ({} threads) reduces {:.0f} elements per threadgroup ({:.0f} per lane) at "
                             "case `{}`; predicted {:.1f} us on the M3 Max, {:.0f}x its bandwidth floor",
                             w.threads_per_threadgroup, per_group, per_lane, t.name, predicted.time_us,
                             predicted.time_us / std::max(predicted.floor_us, 1e-9)),
                 "dispatch 512 or 1024 threads per threadgroup and reduce across simdgroups (tg_sum<TG>, tg_max<TG>, "
                 "tg_argmax<TG>: simd_* within each simdgroup, then the TG/32 partials through threadgroup memory)"};
}

std::optional<Finding> threadgroup_memory(const ir::Kernel& k, const Point& p) {
  const uint64_t bytes = p.workload.threadgroup_memory_bytes;
  if (bytes <= kThreadgroupMemoryWarn || k.threadgroup_arrays.empty()) return std::nullopt;
  return Finding{"threadgroup-memory", k.name, p.variant->entry_point, k.threadgroup_arrays.front().loc,
                 fmt::format("{} bytes of threadgroup memory per threadgroup: {} (above 8 KiB halves the threadgroups "
                             "a core holds at once; {} of {} threads fit per core now)",
                             bytes, bytes > kSingleThreadgroupMemory ? "one threadgroup per core" : "half the threadgroups per core",
                             threadgroups_per_core(p.workload.threads_per_threadgroup, bytes) * p.workload.threads_per_threadgroup,
                             kThreadsPerCore),
                 "shrink the arrays (fewer partials, half instead of float) or a smaller tunable, so that more "
                 "threadgroups share a core"};
}

std::optional<Finding> few_threadgroups(const ir::Kernel& k, const ir::Variant& v, const ir::TestCase& t) {
  const Workload w = workload(k, v, t);
  std::string short_of;
  for (const auto& c : chips()) {
    if (w.threadgroups < uint64_t(c.gpu_cores)) short_of += fmt::format("{}{} ({} cores)", short_of.empty() ? "" : ", ", c.name, c.gpu_cores);
  }
  if (short_of.empty()) return std::nullopt;
  return Finding{"few-threadgroups", k.name, v.entry_point, k.dispatch.loc,
                 fmt::format("the grid has {} threadgroup(s) at case `{}`, fewer than the GPU cores of {}: the other "
                             "cores idle", w.threadgroups, t.name, short_of),
                 "split the work of a threadgroup over several (a two-stage reduction, as argmax_two_stage does, or "
                 "more rows per dispatch) so that every core gets threadgroups"};
}

std::optional<Finding> tiny(const ir::Kernel& k, const ir::Variant& v, const ir::TestCase& t) {
  const expr::Env env = ir::Kernel::env_for(t.dims, v);
  int64_t most = 0;
  for (const auto& b : k.buffers) most = std::max(most, b.elements(env));
  if (most >= kTinyElements) return std::nullopt;
  return Finding{"launch-overhead", k.name, v.entry_point, t.loc,
                 fmt::format("the largest test case (`{}`) has at most {} elements per buffer: the ~{} us launch "
                             "overhead dominates its time",
                             t.name, most, kLaunchMicroseconds),
                 "add a realistic case to `tests:` if the kernel runs on more data, else fuse it into its neighbour "
                 "kernel or batch several calls into one dispatch"};
}

std::optional<Finding> uncoalesced(const ir::Kernel& k, const ir::Variant& v, const SiteCounts& s) {
  if (s.coalescing() <= kUncoalesced || s.mean_lanes() < 8 || s.spec_line == 0) return std::nullopt;
  return Finding{"uncoalesced", k.name, v.entry_point, site_loc(k, s.spec_line),
                 fmt::format("the {} of `{}` here touches {:.1f} 32-byte segments per simdgroup access for {:.0f} "
                             "bytes used: {:.1f}x the segments they need (adjacent lanes touch non-adjacent addresses)",
                             s.store ? "store" : "load", s.buffer, double(s.segments32) / double(s.simd_accesses),
                             double(s.distinct_bytes) / double(s.simd_accesses), s.coalescing()),
                 "index so that lane i touches element base + i (loop with a stride of the threads, not a block per "
                 "lane), or stage the tile through threadgroup memory"};
}

std::optional<Finding> reread(const ir::Kernel& k, const ir::Variant& v, const Counters& c, const BufferCounts& b) {
  // A read_write buffer re-reads by design. Lanes of one simdgroup loading the same bytes are one
  // load (a broadcast); up to one read per simdgroup is sharing between simdgroups (matvec's x),
  // not a copy a register could keep; a small buffer (a position, a scale) stays in cache.
  if (b.unique_stored || !b.unique_loaded) return std::nullopt;
  const double loaded = c.memory_loaded(b), rereads = loaded / double(b.unique_loaded);
  const uint64_t simdgroups = c.threadgroup_count() * ((c.threads_per_group() + 31) / 32);
  if (rereads < kRereads || rereads <= double(simdgroups)) return std::nullopt;
  if (loaded - double(b.unique_loaded) < kRereadShare * double(c.unique_bytes())) return std::nullopt;
  std::string lines;
  int first = 0;
  for (const auto& s : c.sites) {
    if (s.buffer != b.name || s.store || s.spec_line == 0) continue;
    lines += fmt::format("{}{}", lines.empty() ? "" : ", ", s.spec_line);
    if (!first) first = s.spec_line;
  }
  return Finding{"reread", k.name, v.entry_point, first ? site_loc(k, first) : k.name_loc,
                 fmt::format("input `{}` is loaded {:.2f} times per byte ({:.0f} of {} bytes loaded by {} simdgroup(s)){}",
                             b.name, rereads, loaded, b.unique_loaded, simdgroups, lines.empty() ? "" : " at lines " + lines),
                 "load each element once into registers (or threadgroup memory) and reuse that copy in later passes"};
}

}  // namespace

std::vector<Finding> static_lints(const ir::Kernel& k, const Point& p, const ir::TestCase& t) {
  std::vector<Finding> out;
  if (auto f = one_simdgroup_reduction(k, p, t)) out.push_back(*f);
  if (auto f = threadgroup_memory(k, p)) out.push_back(*f);
  return out;
}

std::vector<Finding> counter_lints(const ir::Kernel& k, const ir::Variant& v, const Counters& c) {
  std::vector<Finding> out;
  for (const auto& s : c.sites) {
    if (auto f = uncoalesced(k, v, s)) out.push_back(*f);
  }
  for (const auto& b : c.buffers) {
    if (auto f = reread(k, v, c, b)) out.push_back(*f);
  }
  return out;
}

std::vector<Finding> case_lints(const ir::Kernel& k, const ir::TestCase& t) {
  std::vector<Finding> out;
  const ir::Variant& v = counted_variant(k);
  if (auto f = few_threadgroups(k, v, t)) out.push_back(*f);
  if (auto f = tiny(k, v, t)) out.push_back(*f);
  return out;
}

}  // namespace mtlgen::advisor
