// Source lines of race reports (addr2line on the kernel's object) and their wording.
#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "mtlsim/runtime.h"
#include "report.h"

namespace mtlsim {

namespace {

struct Lookup {
  uintptr_t offset;        // in its object file
  std::vector<int>* lines;  // receives the .metal lines of its inline chain, innermost first
};

std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The object file holding `pc`, as a path addr2line can open from another process.
std::string object_of(uintptr_t pc, uintptr_t& offset) {
  Dl_info info{};
  // pc is a return address: pc - 1 lies inside the call instruction, on the access's line.
  if (!::dladdr(reinterpret_cast<void*>(pc - 1), &info) || !info.dli_fbase) return "";
  offset = pc - 1 - reinterpret_cast<uintptr_t>(info.dli_fbase);
  if (info.dli_fname && info.dli_fname[0] == '/') return info.dli_fname;
  char exe[4096];  // the main program is named as it was started (maybe relative, maybe empty)
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  return n > 0 ? std::string(exe, size_t(n)) : "";
}

struct Frame {
  std::string function, file;
  int line = 0;
};

// "dir/x.metal:36 (discriminator 2)" -> {dir/x.metal, 36}
Frame parse_frame(const std::string& text) {
  Frame f;
  std::string t = text.substr(0, text.find(" ("));
  const size_t colon = t.rfind(':');
  if (colon == std::string::npos) return f;
  f.file = t.substr(0, colon);
  f.line = std::atoi(t.c_str() + colon + 1);
  return f;
}

// The kernel's own code: its .metal file, or a local header of a hand-written file, whose copy
// numbers its lines from a multiple of 1,000,000 (msl::kHeaderLineStride, generator/msl/msl_unit.h).
bool is_metal(const Frame& f) {
  constexpr int kHeaderLineStride = 1000000;
  return f.line > kHeaderLineStride || (f.file.size() > 6 && f.file.compare(f.file.size() - 6, 6, ".metal") == 0);
}

// The .metal lines of one address's inline chain, innermost first. A frame of the same function
// as the one inside it is skipped: g++ splits functions and inlines the parts back, which shows
// up as the function "calling" itself from its first line.
std::vector<int> metal_lines(const std::vector<Frame>& chain) {
  std::vector<int> lines;
  const Frame* inner = nullptr;
  for (const Frame& f : chain) {
    if (!is_metal(f) || f.line <= 0) continue;
    if (inner == nullptr || inner->function != f.function) lines.push_back(f.line);
    inner = &f;
  }
  return lines;
}

// The access's line, and the body line that called the helper holding it: from the inline chain
// when the helper was inlined, else from the call site the detector recorded.
void assign_lines(RaceAccess& a, const std::vector<int>& access, const std::vector<int>& call_site) {
  if (access.empty()) return;
  a.line = access.front();
  const int caller = access.size() > 1 ? access.back() : call_site.empty() ? 0 : call_site.back();
  if (caller != a.line) a.caller_line = caller;
}

// One addr2line run for all lookups in `object`; output per address: "0x...", then its inline
// chain innermost first, two lines per frame: the function, then "file:line".
Addr2lineFn g_addr2line = nullptr;

// addr2line's output for `lookups` as a stream: from the installed runner, else from popen.
FILE* open_addr2line(const std::string& object, const std::vector<Lookup>& lookups, std::string& text) {
  if (g_addr2line) {
    std::vector<uintptr_t> offsets;
    for (const Lookup& l : lookups) offsets.push_back(l.offset);
    text = g_addr2line(object, offsets);
    return text.empty() ? nullptr : ::fmemopen(text.data(), text.size(), "r");
  }
  std::string command = "addr2line -i -a -f -e " + quoted(object);
  for (const Lookup& l : lookups) command += fmt::format(" 0x{:x}", l.offset);
  return ::popen((command + " 2>/dev/null").c_str(), "r");
}

void resolve_object(const std::string& object, std::vector<Lookup>& lookups) {
  std::string text;
  FILE* pipe = open_addr2line(object, lookups, text);
  if (!pipe) return;
  std::vector<std::vector<Frame>> chains;
  std::string function;
  bool expect_function = true;
  char buffer[8192];
  while (std::fgets(buffer, sizeof buffer, pipe)) {
    std::string line(buffer);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    if (line.rfind("0x", 0) == 0) {
      chains.emplace_back();
      expect_function = true;
    } else if (!chains.empty() && expect_function) {
      function = line;
      expect_function = false;
    } else if (!chains.empty()) {
      chains.back().push_back(parse_frame(line));
      chains.back().back().function = function;
      expect_function = true;
    }
  }
  g_addr2line ? std::fclose(pipe) : ::pclose(pipe);
  for (size_t i = 0; i < lookups.size() && i < chains.size(); ++i) *lookups[i].lines = metal_lines(chains[i]);
}

}  // namespace

void set_addr2line(Addr2lineFn run) { g_addr2line = run; }

namespace {

const char* memory_kind(const DataRace& r) {
  if (r.threadgroup_variable) return "threadgroup variable";
  return r.threadgroup_memory ? "threadgroup array" : "buffer";
}

std::string memory_flag(bool threadgroup_memory) { return threadgroup_memory ? "mem_threadgroup" : "mem_device"; }

std::string where(const RaceAccess& a) {
  if (a.line == 0) return fmt::format("an unknown line (pc {:#x}; was the kernel compiled with -g?)", a.pc);
  if (a.caller_line == 0) return fmt::format("line {}", a.line);
  return fmt::format("line {} in a helper called at line {}", a.line, a.caller_line);
}

std::string kind(const RaceAccess& a) {
  return std::string(a.atomic ? "atomic " : "") + (a.write ? "write" : "read");
}

std::string who(const RaceAccess& a, const RaceAccess* same_threadgroup_as) {
  std::string out = fmt::format("thread {} (simdgroup {}) of ", a.thread_index, a.thread_index / kSimdWidth);
  if (same_threadgroup_as && same_threadgroup_as->threadgroup_position == a.threadgroup_position)
    return out + "the same threadgroup";
  return out + "threadgroup " + detail::format_dim(a.threadgroup_position);
}

// Where an access sits in the body: the line that called its helper, else its own line.
std::pair<int, int> body_position(const RaceAccess& a) {
  return {a.caller_line ? a.caller_line : a.line, a.line};
}

// The race's accesses in body order (where a barrier would go between them); execution order on
// a tie.
std::pair<const RaceAccess*, const RaceAccess*> in_source_order(const DataRace& r) {
  const bool swap = body_position(r.later) < body_position(r.earlier);
  return swap ? std::make_pair(&r.later, &r.earlier) : std::make_pair(&r.earlier, &r.later);
}

// A covering barrier already sits between the two lines, yet they race: one of them ran in a
// later iteration of a loop holding both (the barrier orders them within one iteration only).
bool across_iterations(const DataRace& r) {
  if (r.earlier.line == 0 || r.later.line == 0) return false;
  const auto [a, b] = in_source_order(r);
  const int lo = body_position(*a).first, hi = body_position(*b).first;
  return std::any_of(r.barrier_lines.begin(), r.barrier_lines.end(), [&](int l) { return l > lo && l < hi; });
}

// Two plain stores from one statement (the same line, called from the same line).
bool same_statement_stores(const DataRace& r) {
  return r.earlier.write && r.later.write && !r.earlier.atomic && !r.later.atomic && r.earlier.line != 0 &&
         r.earlier.line == r.later.line && r.earlier.caller_line == r.later.caller_line;
}

// What to change, in the words of the two accesses.
std::string fix(const DataRace& r) {
  const std::string flag = memory_flag(r.threadgroup_memory);
  const auto [a, b] = in_source_order(r);
  const std::string between = fmt::format("between the {} at {} and the {} at {}", kind(*a), where(*a), kind(*b), where(*b));
  if (!r.same_threadgroup())
    return "Threadgroups of one dispatch are never ordered with each other (barriers order threads of one "
           "threadgroup only): let one threadgroup own each element, combine results with atomic functions, or "
           "split the work into two dispatches.";
  if (r.earlier.atomic != r.later.atomic)
    return fmt::format("Atomic and plain accesses to one element race unless a barrier orders them: access `{}` "
                       "only through atomic functions, or add threadgroup_barrier(mem_flags::{}) {}.",
                       r.memory, flag, between);
  if (same_statement_stores(r))
    return fmt::format("Both are the store at {}: every thread that runs it writes this element, and no barrier can "
                       "order two threads running one statement. Let one thread write it (guard the store with "
                       "`if (tid == 0)` on a thread index, or `if (simd_is_first())` where one lane per simdgroup "
                       "writes), or give each thread an element of its own.",
                       where(*a));
  if (r.barrier_without_flags)
    return fmt::format("A barrier runs between them, but its mem_flags do not include mem_flags::{}, so it does not "
                       "order this memory: use threadgroup_barrier(mem_flags::{}) {}.",
                       flag, flag, between);
  if (across_iterations(r)) {
    const auto [up, down] = in_source_order(r);
    return fmt::format("A barrier between the two already orders them within one pass, so they race across "
                       "iterations of the loop that holds both: one thread's {} at {} for the next iteration overlaps "
                       "another's {} at {} for this one. Add threadgroup_barrier(mem_flags::{}) at the end of that "
                       "loop's body, after the {} at {}.",
                       kind(*up), where(*up), kind(*down), where(*down), flag, kind(*down), where(*down));
  }
  if (r.earlier.thread_index / kSimdWidth == r.later.thread_index / kSimdWidth)
    return fmt::format("Simd-group functions do not order memory: add simdgroup_barrier(mem_flags::{}) (or "
                       "threadgroup_barrier) {}.", flag, between);
  return fmt::format("Add threadgroup_barrier(mem_flags::{}) {}.", flag, between);
}

// Races between the same two lines on the same memory read as one, and have one fix: the
// compiler may duplicate an access into several code paths (several pcs, one line), and
// `x[i] += v` races both as a read and as a write.
void merge_same_lines(std::vector<DataRace>& races) {
  std::map<std::tuple<std::string, int, int, int, int, bool>, size_t> first;
  std::vector<DataRace> merged;
  for (DataRace& r : races) {
    const bool swap = std::make_pair(r.earlier.line, r.earlier.caller_line) > std::make_pair(r.later.line, r.later.caller_line);
    const RaceAccess& a = swap ? r.later : r.earlier;
    const RaceAccess& b = swap ? r.earlier : r.later;
    const bool known = a.line != 0 && b.line != 0;
    const auto key = std::make_tuple(r.memory, a.line, a.caller_line, b.line, b.caller_line, r.memory_model_only());
    const auto [it, fresh] = first.try_emplace(key, merged.size());
    if (!known || fresh) {
      merged.push_back(std::move(r));
      continue;
    }
    DataRace& kept = merged[it->second];  // keep the example whose threads are furthest apart
    const uint64_t occurrences = kept.occurrences + r.occurrences;
    if (detail::race_distance(r) > detail::race_distance(kept)) kept = std::move(r);
    kept.occurrences = occurrences;
  }
  races = std::move(merged);
}

// A read consumed before an execution-only barrier and a write after it (DataRace::execution_barrier_line).
std::string describe_memory_model(const DataRace& r, const std::string& kernel_name, const std::string& times) {
  const std::string flag = memory_flag(r.threadgroup_memory);
  return fmt::format(
      "memory_model: kernel '{}': the read at {} by {} and the write at {} by {} of element {} of {} `{}`{} are "
      "ordered only by threadgroup_barrier at line {}, whose mem_flags leave out mem_flags::{}. The reading thread "
      "used the value in a simd function before reaching that barrier, so the read had completed when the write "
      "ran, and the result does not depend on the order; but Apple's Metal Shading Language specification says a "
      "barrier with mem_flags::mem_none applies no memory fence and acts only as an execution barrier, so Metal's "
      "memory model does not order the two accesses (a compiler may move memory accesses across it). To be correct "
      "under that model, use threadgroup_barrier(mem_flags::{}) at line {}.",
      kernel_name.empty() ? "<unnamed>" : kernel_name, where(r.earlier), who(r.earlier, nullptr), where(r.later),
      who(r.later, &r.earlier), r.element, memory_kind(r), r.memory, times, r.execution_barrier_line, flag, flag,
      r.execution_barrier_line);
}

}  // namespace

std::string describe(const DataRace& r, const std::string& kernel_name) {
  const std::string times = r.occurrences > 1 ? fmt::format(" ({} times)", r.occurrences) : "";
  if (r.memory_model_only()) return describe_memory_model(r, kernel_name, times);
  const auto [a, b] = in_source_order(r);
  return fmt::format("data_race: kernel '{}': {} at {} by {} and {} at {} by {} race on element {} of {} `{}`{}. {}",
                     kernel_name.empty() ? "<unnamed>" : kernel_name, kind(*a), where(*a), who(*a, nullptr), kind(*b),
                     where(*b), who(*b, a), r.element, memory_kind(r), r.memory,
                     times, fix(r));
}

void resolve_access_sources(std::vector<RaceAccess>& accesses) {
  std::vector<std::vector<int>> lines(accesses.size() * 2);  // per access: its chain, its call site's
  std::map<std::string, std::vector<Lookup>> by_object;
  auto look_up = [&](uintptr_t pc, std::vector<int>* out) {
    uintptr_t offset = 0;
    const std::string object = pc ? object_of(pc, offset) : "";
    if (!object.empty()) by_object[object].push_back({offset, out});
  };
  for (size_t i = 0; i < accesses.size(); ++i) {
    look_up(accesses[i].pc, &lines[2 * i]);
    look_up(accesses[i].call_site, &lines[2 * i + 1]);
  }
  for (auto& [object, lookups] : by_object) resolve_object(object, lookups);
  for (size_t i = 0; i < accesses.size(); ++i) assign_lines(accesses[i], lines[2 * i], lines[2 * i + 1]);
}

void resolve_race_sources(std::vector<DataRace>& races) {
  std::vector<RaceAccess> accesses;
  for (const auto& r : races) {
    accesses.push_back(r.earlier);
    accesses.push_back(r.later);
  }
  resolve_access_sources(accesses);
  for (size_t i = 0; i < races.size(); ++i) {
    races[i].earlier = accesses[2 * i];
    races[i].later = accesses[2 * i + 1];
  }
  merge_same_lines(races);
}

std::string describe_last_write(const RaceAccess& w) {
  if (w.pc == 0) return "never written by the kernel";
  return fmt::format("last written at {} by thread {} of threadgroup {}", where(w), w.thread_index,
                     detail::format_dim(w.threadgroup_position));
}

}  // namespace mtlsim
