// Wording of the issues a worker detects. Each message is meant to be read alone: it names
// the kernel, the threadgroup, the source line(s), the threads involved, and what to change.
#include <fmt/format.h>

#include <cstdlib>
#include <map>
#include <string>
#include <utility>

#include "worker.h"

namespace mtlsim::detail {

void Worker::report(SimIssue::Kind kind, int line, uint32_t thread, const std::string& what) {
  const std::string& name = job_->opts.kernel_name;
  SimIssue issue{kind,
                 fmt::format("{}: kernel '{}', threadgroup {}: {}", to_string(kind),
                             name.empty() ? "<unnamed>" : name, format_dim(tg_position_), what),
                 line, tg_position_, thread};
  job_->sink.add(std::move(issue));
}

std::vector<uint32_t> Worker::threads_where(uint32_t first, uint32_t count, LaneState state) const {
  std::vector<uint32_t> out;
  for (uint32_t i = first; i < first + count && i < size_; ++i)
    if (states_[i] == state) out.push_back(i);
  return out;
}

// "threads 0-15 wait at simd_sum (line 12); threads 16-31 wait at threadgroup_barrier (line 20)"
std::string Worker::describe_waits(uint32_t first, uint32_t count) const {
  std::map<std::pair<int, int>, std::vector<uint32_t>> groups;  // (line, op) -> threads
  for (uint32_t i = first; i < first + count && i < size_; ++i) {
    if (states_[i] != LaneState::at_barrier && states_[i] != LaneState::at_simd) continue;
    groups[{wait_lines_[i], int(lanes_[i].wait_op)}].push_back(i);
  }
  std::string out;
  for (const auto& [key, threads] : groups) {
    if (!out.empty()) out += "; ";
    out += fmt::format("{} wait at {} (line {})", format_threads(threads), op_name(Op(key.second)),
                       key.first);
  }
  return out;
}

void Worker::report_simd_divergence(SimdGroup& sg, Lane& me) {
  report(SimIssue::Kind::simd_divergence, sg.line, sg.index * kSimdWidth,
         fmt::format("lanes of simdgroup {} reached different simd-group functions: {}. Every "
                     "active lane of a simdgroup must call the same simd function at the same "
                     "source line (only lanes that returned from the kernel are inactive); "
                     "hoist the call out of the lane-dependent branch.",
                     sg.index, describe_waits(sg.index * kSimdWidth, kSimdWidth)));
  abandon(me);
}

void Worker::note_poison(const SimdGroup& sg, PoisonHit hit) {
  const uint32_t thread = sg.index * kSimdWidth + uint32_t(hit.lane);
  std::vector<uint32_t> receivers;
  for (uint32_t m = hit.tainted; m; m &= m - 1) receivers.push_back(sg.index * kSimdWidth + __builtin_ctz(m));
  const std::string& name = job_->opts.kernel_name;
  job_->sink.add_poison_flow(
      {SimIssue::Kind::poison_in_collective,
       fmt::format("poison_in_collective: kernel '{}', threadgroup {}: {} at line {} received uninitialised "
                   "threadgroup memory (poison NaN 0x{:X}) on lane {} (thread {}), and {} got results computed "
                   "from it. A thread read threadgroup memory that no thread had written: look for a missing "
                   "threadgroup_barrier between the writes and this read, or an index beyond the written range.",
                   name.empty() ? "<unnamed>" : name, format_dim(tg_position_), op_name(sg.op), sg.line, hit.bits,
                   hit.lane, thread, receivers.empty() ? "no lane" : format_threads(receivers)),
       sg.line, tg_position_, thread, uint32_t(receivers.size())});
}

void Worker::report_barrier_divergence(Lane& me) {
  const std::vector<uint32_t> waiting = threads_where(0, size_, LaneState::at_barrier);
  report(SimIssue::Kind::barrier_divergence, arrivals_.barrier_line, waiting.empty() ? 0 : waiting.front(),
         fmt::format("threads wait at barriers on different source lines: {}. All threads of a "
                     "threadgroup must reach the same barrier; move the barrier out of the "
                     "divergent branch.",
                     describe_waits(0, size_)));
  abandon(me);
}

// "threads 100-199 returned at line 19, threads 200-255 at the end of the kernel": where each
// returned lane left the kernel, from the `return` it executed last (when that one was in the
// kernel's own function; a helper's return says nothing about where the kernel ended).
std::string Worker::describe_returns(const std::vector<uint32_t>& gone) const {
  const std::string& function = job_->opts.kernel_function;
  std::map<int, std::vector<uint32_t>> by_line;  // 0: fell off the end, or unknown
  for (uint32_t t : gone) {
    const ReturnMark& m = returns_[t];
    const bool in_kernel = m.function != nullptr && !function.empty() && function == m.function;
    by_line[in_kernel ? m.line : 0].push_back(t);
  }
  if (by_line.size() == 1 && by_line.begin()->first == 0) return format_threads(gone) + " returned";
  std::string out;
  for (const auto& [line, threads] : by_line) {
    if (!out.empty()) out += ", ";
    out += format_threads(threads) + (out.empty() ? " returned" : "");
    out += line > 0 ? fmt::format(" at the `return` on line {}", line) : " at the end of the kernel";
  }
  return out;
}

void Worker::report_early_exit(Lane& me) {
  const std::vector<uint32_t> gone = threads_where(0, size_, LaneState::done);
  const std::vector<uint32_t> waiting = threads_where(0, size_, LaneState::at_barrier);
  report(SimIssue::Kind::barrier_early_exit, arrivals_.barrier_line, gone.front(),
         fmt::format("{} before threadgroup_barrier at line {}, which {} reached. Metal "
                     "leaves a barrier that some threads of the threadgroup never reach "
                     "undefined (it may hang or release early); guard the work, not the "
                     "barrier: e.g. `if (i < n) {{ ... }}` instead of `if (i >= n) return;`.",
                     describe_returns(gone), arrivals_.barrier_line, format_threads(waiting)));
  abandon(me);
}

void Worker::report_memory_limit(const ThreadgroupVariableSite& site, size_t total_bytes) {
  Lane& me = *tls_lane;
  report(SimIssue::Kind::threadgroup_memory_limit, site.line, me.index,
         fmt::format("threadgroup variable `{}` (line {}, {} bytes) brings threadgroup memory to {} bytes ({} in "
                     "[[threadgroup(n)]] arrays, the rest in variables declared in the kernel); Metal allows at most "
                     "{} bytes (32 KiB) per threadgroup. Use smaller tiles, or reuse one buffer across phases.",
                     site.name, site.line, site.bytes, total_bytes, job_->array_bytes,
                     ThreadgroupVariables::kMetalLimitBytes));
  abandon(me);
}

namespace {
// "float [8]" from the type name the bounds check carries ("'float [8]'"), and its element count.
std::pair<std::string, long long> array_type_of(const char* quoted) {
  std::string type(quoted);
  if (type.size() >= 2 && type.front() == '\'' && type.back() == '\'') type = type.substr(1, type.size() - 2);
  const size_t open = type.rfind('[');
  return {type, open == std::string::npos ? -1 : std::atoll(type.c_str() + open + 1)};
}
}  // namespace

void Worker::report_array_bounds(int line, int64_t index, const char* array_type) {
  Lane& me = *tls_lane;
  const auto [type, count] = array_type_of(array_type);
  report(SimIssue::Kind::array_out_of_bounds, line, me.index,
         fmt::format("thread {} accessed element {} of an array of type `{}` at line {}, outside its {} elements. Metal "
                     "leaves that undefined: past a private (thread) array lie the thread's other variables, which "
                     "such a store overwrites. Keep the index within 0..{} (a loop that starts at a computed index "
                     "may start below 0 or past the end).",
                     me.index, index, type, line, count, count - 1));
  abandon(me);
}

// Called by the scheduler when no fiber is ready but some have not returned.
void Worker::report_stall() {
  for (uint32_t s = 0; s < simdgroups_; ++s) {
    const SimdGroup& sg = simds_[s];
    if (sg.arrived == 0) continue;
    // Some lanes wait at a collective that the rest of the simdgroup never reaches.
    report(SimIssue::Kind::simd_divergence, sg.line, s * kSimdWidth,
           fmt::format("lanes of simdgroup {} never met at one simd-group function: {}. Every "
                       "active lane of a simdgroup must call the same simd function, and no lane "
                       "may wait at a threadgroup_barrier meanwhile; hoist the call out of the "
                       "lane-dependent branch.",
                       s, describe_waits(s * kSimdWidth, kSimdWidth)));
    return;
  }
  const std::vector<uint32_t> gone = threads_where(0, size_, LaneState::done);
  report(SimIssue::Kind::deadlock, arrivals_.barrier_line, 0,
         fmt::format("no thread can make progress: {}{}.", describe_waits(0, size_),
                     gone.empty() ? "" : "; " + format_threads(gone) + " returned"));
}

}  // namespace mtlsim::detail
