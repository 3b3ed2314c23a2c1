#include "advisor/lints.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace mtlgen::advisor {

namespace {

const Chip& reference_chip() { return chip_named("M3 Max"); }  // where the seeds were measured

// The spec line of the first reduction in the body's code (a simd_ or tg_ reduction, or an
// argmax combine across lanes; comment lines skipped); the body's first line when the body has
// none or is hand-written.
support::SourceLoc reduction_line(const ir::Kernel& k, bool& found) {
  static const std::regex call(R"(\b(simd_(sum|max|min|prefix_\w+|shuffle_down|shuffle_xor)|tg_(sum|max|min|argmax))\b)");
  static const std::regex comment(R"(^\s*//)");
  found = false;
  if (k.is_source()) return {k.source->file, 1, 1};
  std::istringstream in(k.body.text);
  int offset = 0;
  for (std::string line; std::getline(in, line); ++offset) {
    if (!std::regex_search(line, comment) && std::regex_search(line, call)) {
      found = true;
      return {k.spec_path, k.body.loc.line + offset, 1};
    }
  }
  return {k.spec_path, k.body.loc.line, 1};
}

// Whether the body reduces an array of accumulators (`simd_sum(acc[r])`): a simdgroup that owns
// several rows keeps a load per row in flight, which the model's one load per thread (without
// counters) does not see.
bool reduces_rows(const ir::Kernel& k) {
  static const std::regex row(R"(\b(simd_\w+|tg_\w+)\s*(<[^>]*>)?\s*\(\s*\w+\s*\[)");
  return std::regex_search(k.body.text, row);
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

// A site in a local header of a hand-written kernel is located in the header (its counters say which).
support::SourceLoc site_loc(const ir::Kernel& k, int spec_line, const std::string& file = "") {
  if (!file.empty()) return {file, spec_line, 1};
  return {k.is_source() ? k.source->file : k.spec_path, spec_line, 1};
}

// Many threadgroups share a core, so one simdgroup per threadgroup is a problem only where the
// grid cannot fill the machine (fewer simdgroups than the M3 Max has SIMD units, one threadgroup
// doing the whole reduction included) and the model finds the time set by the threads' chain of
// round trips. A simdgroup that reduces several rows at once (the matvecs) is the other design.
std::optional<Finding> one_simdgroup_reduction(const ir::Kernel& k, const Point& p, const ir::TestCase& t) {
  const Workload& w = p.workload;
  bool reduces = false;
  support::SourceLoc at = reduction_line(k, reduces);
  if (!reduces || w.threads_per_threadgroup > 32 || reduces_rows(k)) return std::nullopt;
  const double per_group = double(input_elements(k, *p.variant, t)) / double(w.threadgroups);
  const double per_lane = per_group / double(w.threads_per_threadgroup);
  if (per_lane < kReductionElementsPerLane) return std::nullopt;
  const Prediction predicted = predict(w, reference_chip());
  const uint64_t simd_units = uint64_t(reference_chip().gpu_cores) * kSimdUnitsPerCore;
  if (w.threadgroups >= simd_units || !predicted.latency_bound()) return std::nullopt;
  return Finding{"reduction-one-simdgroup", k.name, p.variant->entry_point, at,
                 fmt::format("one simdgroup ({} threads) reduces {:.0f} elements per threadgroup ({:.0f} per lane) in {} "
                             "threadgroup(s) at case `{}`, fewer than the M3 Max's {} SIMD units: {} threads resident "
                             "on the M3 Max each wait on a chain of round trips ({:.1f} us) longer than the memory "
                             "time ({:.1f} us); predicted {:.1f} us, {:.0f}x its bandwidth floor",
                             w.threads_per_threadgroup, per_group, per_lane, w.threadgroups, t.name, simd_units,
                             predicted.resident_threads, predicted.latency_us, std::max(predicted.dram_us, predicted.load_us),
                             predicted.time_us, predicted.time_us / std::max(predicted.floor_us, 1e-9)),
                 "dispatch 512 or 1024 threads per threadgroup and reduce across simdgroups (tg_sum<TG>, tg_max<TG>, "
                 "tg_argmax<TG>: simd_* within each simdgroup, then the TG/32 partials through threadgroup memory), or "
                 "split the reduction over more threadgroups (a two-stage reduction, as argmax_two_stage does)"};
}

// Threadgroup memory that holds fewer threadgroups on a core than its threads would.
std::optional<Finding> threadgroup_memory(const ir::Kernel& k, const Point& p) {
  const uint64_t bytes = p.workload.threadgroup_memory_bytes, threads = p.workload.threads_per_threadgroup;
  if (k.threadgroup_arrays.empty() || bytes <= kThreadgroupMemoryWarn) return std::nullopt;
  const uint64_t held = threadgroups_per_core(threads, bytes), by_threads = threadgroups_per_core(threads, 0);
  if (held >= by_threads) return std::nullopt;
  return Finding{"threadgroup-memory", k.name, p.variant->entry_point, k.threadgroup_arrays.front().loc,
                 fmt::format("{} bytes of threadgroup memory per threadgroup: a core's {} KiB hold {} threadgroup(s) "
                             "({} threads) where its threads would allow {} ({} threads)",
                             bytes, kThreadgroupMemoryPerCore / 1024, held, held * threads, by_threads, by_threads * threads),
                 "shrink the arrays (fewer partials, half instead of float) or a smaller tunable, so that more "
                 "threadgroups share a core"};
}

// Another tune point of `v`'s types whose grid at case `t` gives every core of every chip a
// threadgroup (the fewest threadgroups that do, so the most work each), as "TG=64 (entry)"; "" when
// none does.
std::string filling_tune_point(const ir::Kernel& k, const ir::Variant& v, const ir::TestCase& t, uint64_t cores) {
  const ir::Variant* pick = nullptr;
  uint64_t pick_groups = 0;
  for (const auto& o : k.variants) {
    if (o.types != v.types || o.tunables == v.tunables) continue;
    const uint64_t groups = workload(k, o, t).threadgroups;
    if (groups < cores || (pick != nullptr && groups >= pick_groups)) continue;
    pick = &o;
    pick_groups = groups;
  }
  if (pick == nullptr) return "";
  std::string tuning;
  for (const auto& [name, value] : pick->tunables) tuning += fmt::format("{}{}={}", tuning.empty() ? "" : ", ", name, value);
  return fmt::format("{} ({}: {} threadgroups)", tuning, pick->entry_point, pick_groups);
}

std::optional<Finding> few_threadgroups(const ir::Kernel& k, const ir::Variant& v, const ir::TestCase& t) {
  const Workload w = workload(k, v, t);
  std::string short_of;
  uint64_t most_cores = 0;
  for (const auto& c : chips()) {
    most_cores = std::max(most_cores, uint64_t(c.gpu_cores));
    if (w.threadgroups < uint64_t(c.gpu_cores)) short_of += fmt::format("{}{} ({} cores)", short_of.empty() ? "" : ", ", c.name, c.gpu_cores);
  }
  if (short_of.empty()) return std::nullopt;
  const std::string tune_point = filling_tune_point(k, v, t, most_cores);
  return Finding{"few-threadgroups", k.name, v.entry_point, k.dispatch.loc,
                 fmt::format("the grid has {} threadgroup(s) at case `{}`, fewer than the GPU cores of {}: the other "
                             "cores idle", w.threadgroups, t.name, short_of),
                 !tune_point.empty()
                     ? fmt::format("where shapes like this one are what you run, use the tune point {}: every "
                                   "core gets threadgroups (the tuning table sets one tune point per kernel and "
                                   "element type: tune at the shapes you run)",
                                   tune_point)
                     : "split the work of a threadgroup over several (a two-stage reduction, as argmax_two_stage "
                       "does, or more rows per dispatch) so that every core gets threadgroups"};
}

std::optional<Finding> tiny(const ir::Kernel& k, const ir::Variant& v, const ir::TestCase& t) {
  const expr::Env env = ir::Kernel::env_for(t.dims, v);
  int64_t most = 0;
  for (const auto& b : k.buffers) most = std::max(most, b.elements(env));
  if (most >= kTinyElements) return std::nullopt;
  return Finding{"launch-overhead", k.name, v.entry_point, t.loc,
                 fmt::format("the largest test case (`{}`) has at most {} elements per buffer: the launch "
                             "overhead ({:.1f} us on the M3 Max) dominates its time",
                             t.name, most, reference_chip().launch_us()),
                 "add a realistic case to `tests:` if the kernel runs on more data, else fuse it into its neighbour "
                 "kernel or batch several calls into one dispatch"};
}

const ir::BlockLayout* block_layout(const ir::Kernel& k, const std::string& buffer) {
  for (const auto& b : k.buffers) {
    if (b.name != buffer || b.block.empty()) continue;
    for (const auto& layout : k.blocks) {
      if (layout.name == b.block) return &layout;
    }
  }
  return nullptr;
}

// Lane i reading element base + i is the fix for an array of scalars; in an array of blocks
// (q4_0's 18 bytes, q8_0's 34) a lane that owns a block makes adjacent lanes touch addresses a
// block apart, and the remedy is in how a block is loaded or laid out.
std::string uncoalesced_fix(const ir::BlockLayout* block, const SiteCounts& s) {
  if (!block) {
    return "index so that lane i touches element base + i (loop with a stride of the threads, not a block per lane), "
           "or stage the tile through threadgroup memory";
  }
  return fmt::format("`{}` is {}-byte blocks ({}-byte aligned) and this site loads {:.0f} byte(s) per access, so the lanes' "
                     "loads fall a block apart; the blocks of one step are contiguous ({} bytes for 32 lanes) and "
                     "caches merge them, so fewer, wider loads are the fix: read a block as {}-byte words, or let "
                     "adjacent lanes read adjacent words of one block (as ggml's Metal q4_0 kernel: several lanes per "
                     "block, 16-bit words), or "
                     "repack the weights with the scales in a buffer of their own so that the quants are 16-byte "
                     "aligned and load as uint4 (as nvfp4_matvec's layout does)",
                     s.buffer, block->size, block->align, double(s.bytes) / double(std::max<uint64_t>(s.accesses, 1)),
                     32 * block->size, block->align);
}

std::optional<Finding> uncoalesced(const ir::Kernel& k, const ir::Variant& v, const SiteCounts& s) {
  if (s.coalescing() <= kUncoalesced || s.mean_lanes() < 8 || s.spec_line == 0) return std::nullopt;
  return Finding{"uncoalesced", k.name, v.entry_point, site_loc(k, s.spec_line, s.file),
                 fmt::format("the {} of `{}` here touches {:.1f} 32-byte segments per simdgroup access for {:.0f} "
                             "bytes used: {:.1f}x the segments they need (adjacent lanes touch non-adjacent addresses)",
                             s.store ? "store" : "load", s.buffer, double(s.segments32) / double(s.simd_accesses),
                             double(s.distinct_bytes) / double(s.simd_accesses), s.coalescing()),
                 uncoalesced_fix(block_layout(k, s.buffer), s)};
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
  const SiteCounts* first = nullptr;
  for (const auto& s : c.sites) {
    if (s.buffer != b.name || s.store || s.spec_line == 0) continue;
    lines += fmt::format("{}{}", lines.empty() ? "" : ", ", s.spec_line);
    if (!first) first = &s;
  }
  return Finding{"reread", k.name, v.entry_point, first ? site_loc(k, first->spec_line, first->file) : k.name_loc,
                 fmt::format("input `{}` is loaded {:.2f} times per byte ({:.0f} of {} bytes loaded by {} simdgroup(s)){}",
                             b.name, rereads, loaded, b.unique_loaded, simdgroups, lines.empty() ? "" : " at lines " + lines),
                 "load each element once into registers (or threadgroup memory) and reuse that copy in later passes"};
}

// The spec's MSL as (text, line of its first line, file): the preludes and the body, or the
// hand-written file.
struct CodeText {
  std::string text;
  int first_line = 1;
  std::string file;
};

std::vector<CodeText> msl_texts(const ir::Kernel& k) {
  if (k.is_source()) {
    std::ifstream in(k.source->file);
    std::ostringstream text;
    text << in.rdbuf();
    return {{text.str(), 1, k.source->file}};
  }
  std::vector<CodeText> out;
  for (const ir::CodeBlock* b : {&k.prelude, &k.metal_prelude, &k.body}) {
    if (!b->text.empty()) out.push_back({b->text, b->loc.line, k.spec_path});
  }
  return out;
}

// Names an index may use and still be the same in every lane: the kernel's dims, scalars and
// tunables, loop counters that start at a literal, ALL_CAPS constants, the threadgroup's position
// and the language's type and cast names.
std::set<std::string> uniform_names(const ir::Kernel& k, const std::vector<CodeText>& texts) {
  std::set<std::string> names = {"tgid", "threadgroup_position_in_grid", "SIMD_SIZE", "uint", "int", "ushort",
                                 "short", "uchar", "char", "size_t", "uint32_t", "int32_t", "uint8_t"};
  for (const auto& d : k.dims) names.insert(d.name);
  for (const auto& s : k.scalars) names.insert(s.name);
  for (const auto& t : k.tunables) names.insert(t.name);
  static const std::regex counter(R"(for\s*\(\s*(?:const\s+)?\w+\s+(\w+)\s*=\s*[0-9A-Z_][\w]*\s*;)");
  for (const auto& t : texts) {
    for (auto it = std::sregex_iterator(t.text.begin(), t.text.end(), counter); it != std::sregex_iterator(); ++it)
      names.insert((*it)[1]);
  }
  return names;
}

bool all_caps(const std::string& name) {
  return std::none_of(name.begin(), name.end(), [](char c) { return std::islower(static_cast<unsigned char>(c)); });
}

// The bracketed index after `open` (the position of `[`), "" when unbalanced.
std::string index_at(const std::string& text, size_t open) {
  int depth = 0;
  for (size_t i = open; i < text.size(); ++i) {
    depth += text[i] == '[' ? 1 : text[i] == ']' ? -1 : 0;
    if (depth == 0) return text.substr(open + 1, i - open - 1);
  }
  return "";
}

// The first name of `index` that may differ between lanes ("" when every name is uniform).
std::string per_lane_name(const std::string& index, const std::set<std::string>& uniform) {
  static const std::regex name(R"([A-Za-z_]\w*)");
  for (auto it = std::sregex_iterator(index.begin(), index.end(), name); it != std::sregex_iterator(); ++it) {
    const std::string n = it->str();
    const bool literal_suffix = it->position() > 0 && std::isdigit(static_cast<unsigned char>(index[it->position() - 1]));
    if (!literal_suffix && !uniform.count(n) && !all_caps(n)) return n;
  }
  return "";
}

std::vector<Finding> constant_tables(const ir::Kernel& k, const ir::Variant& v) {
  static const std::regex table(R"(\bconstant\b[^;=(){}\[]*?\b(\w+)\s*\[[^\]]*\]\s*=)");
  const std::vector<CodeText> texts = msl_texts(k);
  const std::set<std::string> uniform = uniform_names(k, texts);
  std::set<std::string> tables;
  for (const auto& t : texts) {
    for (auto it = std::sregex_iterator(t.text.begin(), t.text.end(), table); it != std::sregex_iterator(); ++it)
      tables.insert((*it)[1]);
  }
  std::vector<Finding> out;
  for (const auto& name : tables) {
    const std::regex use("\\b" + name + "\\s*\\[");
    for (const auto& t : texts) {
      for (auto it = std::sregex_iterator(t.text.begin(), t.text.end(), use); it != std::sregex_iterator(); ++it) {
        const size_t open = size_t(it->position() + it->length() - 1);
        const size_t after = t.text.find_first_not_of(" \t", open + index_at(t.text, open).size() + 2);
        if (after != std::string::npos && t.text[after] == '=' && t.text.compare(after, 2, "==") != 0) continue;  // the declaration
        const std::string lane_name = per_lane_name(index_at(t.text, open), uniform);
        if (lane_name.empty()) continue;
        const int line = t.first_line + int(std::count(t.text.begin(), t.text.begin() + it->position(), '\n'));
        out.push_back({"constant-table", k.name, v.entry_point, {t.file, line, 1},
                       fmt::format("`constant` table `{}` is indexed by `{}`, a value that differs between lanes: the "
                                   "constant cache serves one address at a time, so a simdgroup's lookup takes up to "
                                   "32 of them (NVIDIA's constant cache serialises it as well)",
                                   name, lane_name),
                       "compute the value with bit operations (as nvfp4_matvec decodes E2M1: exponent and mantissa "
                       "moved into float's fields), or copy the table into threadgroup memory once per threadgroup "
                       "(or into a register array) and index that"});
      }
    }
  }
  return out;
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
  for (auto& f : constant_tables(k, v)) out.push_back(std::move(f));
  return out;
}

}  // namespace mtlgen::advisor
