#include "advisor/advisor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <regex>

#include "advisor/lints.h"

namespace mtlgen::advisor {

namespace {

using Json = nlohmann::json;

int64_t total_buffer_bytes(const ir::Kernel& k, const ir::Variant& v, const expr::Env& env) {
  int64_t bytes = 0;
  for (const auto& b : k.buffers) bytes += b.elements(env) * ir::info(b.type.resolve(v.types)).size;
  return bytes;
}

bool accepts(const ir::Kernel& k, const ir::Variant& v, const ir::TestCase& t) {
  try {
    return k.dims_violation(t.dims).empty() && k.variant_violation(t.dims, v).empty();
  } catch (const std::exception&) {
    return false;
  }
}

std::optional<int64_t> evaluate(const std::optional<expr::Expr>& e, const expr::Env& env) {
  if (!e) return std::nullopt;
  return expr::evaluate(*e, env);
}

std::string point_label(const ir::Kernel& k, const ir::Variant& v, const ir::Variant& counted) {
  std::string label = k.tunables.empty() ? "default" : "";
  for (const auto& [name, value] : v.tunables) label += fmt::format("{}{}={}", label.empty() ? "" : ", ", name, value);
  if (v.types != counted.types) label = v.entry_point;
  return label;
}

// The buffers and their unique bytes, and "the difference (8192 B) is buffer `w`" for each buffer
// whose unique bytes explain the difference on their own.
std::string culprit(int64_t declared, const std::vector<std::pair<std::string, uint64_t>>& per_buffer) {
  std::string list, named;
  uint64_t counted = 0;
  for (const auto& [name, bytes] : per_buffer) {
    list += fmt::format("{}{} {} B", list.empty() ? "" : ", ", name, bytes);
    counted += bytes;
  }
  const double difference = std::abs(double(counted) - double(declared));
  for (const auto& [name, bytes] : per_buffer) {
    if (std::abs(double(bytes) - difference) <= kCostMargin * double(std::max<uint64_t>(bytes, 1)))
      named += fmt::format("{}`{}`", named.empty() ? "" : " or ", name);
  }
  return named.empty() ? list : fmt::format("{}; the difference ({} B) is buffer {}", list, uint64_t(difference), named);
}

CostCheck check_term(const char* term, const std::optional<int64_t>& declared,
                     const std::vector<std::pair<std::string, uint64_t>>& per_buffer) {
  CostCheck c;
  c.term = term;
  for (const auto& p : per_buffer) c.counted += p.second;
  if (!declared) return c;
  c.declared = *declared;
  const double margin = kCostMargin * std::max<double>(double(c.counted), 1);
  c.agrees = std::abs(double(c.counted) - double(*declared)) <= margin;
  if (!c.agrees) {
    c.message = fmt::format("cost {} = {} B, but the kernel {} {} unique bytes ({})", term, *declared,
                            std::string(term) == "bytes_read" ? "read" : "wrote", c.counted, culprit(*declared, per_buffer));
  }
  return c;
}

Point make_point(const ir::Kernel& k, const ir::Variant& v, const ir::Variant& counted, const ir::TestCase& t,
                 const std::optional<Counters>& counters) {
  Point p;
  p.variant = &v;
  p.label = point_label(k, v, counted);
  p.counted = &v == &counted;
  p.workload = workload(k, v, t);
  if (counters) apply_counters(p.workload, *counters);
  for (const auto& chip : chips()) p.per_chip.push_back(predict(p.workload, chip));
  return p;
}

// One finding per lint, variant and line: several instructions of one line are one finding.
void add_findings(std::vector<Finding>& to, std::vector<Finding> more) {
  for (auto& f : more) {
    const bool seen = std::any_of(to.begin(), to.end(), [&](const Finding& g) {
      return g.lint == f.lint && g.variant == f.variant && g.at.line == f.at.line && g.at.file == f.at.file;
    });
    if (!seen) to.push_back(std::move(f));
  }
}

void count_default(KernelAdvice& a, const CountFn& count) {
  const ir::Kernel& k = *a.kernel;
  a.counted_test = counted_case(k);
  try {
    a.counters = counters_from_json(count(k, *a.counted_variant, *a.counted_test));
  } catch (const std::exception& e) {
    a.count_error = e.what();
    return;
  }
  a.cost = check_cost(k, *a.counted_variant, *a.counted_test, *a.counters);
  for (const auto& c : a.cost) {
    if (c.agrees) continue;
    const auto& e = c.term == "bytes_read" ? k.cost.bytes_read : k.cost.bytes_written;
    a.findings.push_back({"cost-model", k.name, a.counted_variant->entry_point, e ? e->loc : k.name_loc, c.message,
                          "correct the `cost:` expression so that the roofline and the predictions use the bytes the "
                          "kernel really moves"});
  }
  add_findings(a.findings, counter_lints(k, *a.counted_variant, *a.counters));
}

}  // namespace

std::string Finding::text() const {
  return fmt::format("{}:{}: warning: [{}] {} ({}): {}; fix: {}", at.file, at.line, lint, kernel, variant, message, fix);
}

const ir::Variant& counted_variant(const ir::Kernel& k) {
  for (const auto& v : k.variants) {
    if (v.is_default_tuning) return v;
  }
  return k.variants.front();
}

const ir::TestCase* realistic_case(const ir::Kernel& k) {
  const ir::Variant& v = counted_variant(k);
  // The spec's author marked the sizes that matter (`benchmark: true`); the largest case may be a
  // stress test no one runs.
  const bool marked = std::any_of(k.tests.cases.begin(), k.tests.cases.end(),
                                  [&](const ir::TestCase& t) { return t.benchmark && accepts(k, v, t); });
  const ir::TestCase* best = nullptr;
  int64_t best_bytes = -1;
  for (const auto& t : k.tests.cases) {
    if (!accepts(k, v, t) || (marked && !t.benchmark)) continue;
    const int64_t bytes = total_buffer_bytes(k, v, ir::Kernel::env_for(t.dims, v));
    if (bytes > best_bytes) best = &t, best_bytes = bytes;
  }
  return best;
}

std::vector<const ir::TestCase*> family_cases(const ir::Kernel& k) {
  std::vector<const ir::TestCase*> cases;
  for (const auto& t : k.tests.cases) {
    if (t.benchmark && accepts(k, counted_variant(k), t)) cases.push_back(&t);
  }
  if (cases.empty() && realistic_case(k)) cases.push_back(realistic_case(k));
  return cases;
}

const ir::TestCase* counted_case(const ir::Kernel& k) {
  const ir::Variant& v = counted_variant(k);
  const ir::TestCase *best = nullptr, *smallest = nullptr;
  int64_t best_traffic = -1, smallest_bytes = -1;
  for (const auto& t : k.tests.cases) {
    if (!accepts(k, v, t)) continue;
    const expr::Env env = ir::Kernel::env_for(t.dims, v);
    const int64_t bytes = total_buffer_bytes(k, v, env), flops = evaluate(k.cost.flops, env).value_or(0);
    if (smallest_bytes < 0 || bytes < smallest_bytes) smallest = &t, smallest_bytes = bytes;
    // By the bytes the cost model says move (a cache update moves a row, not the cache), the
    // first of equals: cases written later tend to be the edge cases.
    const int64_t traffic = k.cost.bytes_read || k.cost.bytes_written ? int64_t(workload(k, v, t).unique_bytes) : bytes;
    if (bytes <= kCountedBytes && flops <= kCountedFlops && traffic > best_traffic) best = &t, best_traffic = traffic;
  }
  return best ? best : smallest;
}

Workload workload(const ir::Kernel& k, const ir::Variant& v, const ir::TestCase& t) { return workload(k, v, t.dims); }

Workload workload(const ir::Kernel& k, const ir::Variant& v, const std::map<std::string, int64_t>& dims) {
  const expr::Env env = ir::Kernel::env_for(dims, v);
  Workload w;
  auto read = evaluate(k.cost.bytes_read, env), written = evaluate(k.cost.bytes_written, env);
  w.unique_bytes = read || written ? uint64_t(read.value_or(0) + written.value_or(0))
                                   : uint64_t(total_buffer_bytes(k, v, env));
  w.flops = uint64_t(evaluate(k.cost.flops, env).value_or(0));
  w.threadgroups = 1;
  for (const auto& e : k.dispatch.threadgroups) w.threadgroups *= uint64_t(std::max<int64_t>(expr::evaluate(e, env), 1));
  w.threads_per_threadgroup = 1;
  for (int64_t n : k.threadgroup_shape(v, env)) w.threads_per_threadgroup *= uint64_t(std::max<int64_t>(n, 1));
  for (int64_t b : v.threadgroup_array_bytes) w.threadgroup_memory_bytes += uint64_t(b + 15) / 16 * 16;
  w.sync_phases = sync_phases(k);
  return w;
}

uint64_t sync_phases(const ir::Kernel& k) {
  // A tg_* helper synchronises the threadgroup once per call as the model counts it: its second
  // barrier only orders the partials' reuse, and no load waits on it.
  static const std::regex sync(R"(\b(threadgroup_barrier\s*\(|tg_\w+\s*<))");
  const std::string& body = k.body.text;
  return uint64_t(std::distance(std::sregex_iterator(body.begin(), body.end(), sync), std::sregex_iterator()));
}

void apply_counters(Workload& w, const Counters& c) {
  w.coalescing = c.coalescing();
  w.loaded_bytes = uint64_t(double(w.unique_bytes) * c.loaded_per_unique_byte());
  w.bytes_in_flight = std::max(kScalarBytesInFlight, c.widest_load_bytes());
}

std::vector<CostCheck> check_cost(const ir::Kernel& k, const ir::Variant& v, const ir::TestCase& t, const Counters& c) {
  const expr::Env env = ir::Kernel::env_for(t.dims, v);
  std::vector<std::pair<std::string, uint64_t>> read, written;
  for (const auto& b : c.buffers) {
    // A write-only output read back (a value kept past a register chunk) is not an input.
    const ir::Buffer* decl = nullptr;
    for (const auto& kb : k.buffers) decl = kb.name == b.name ? &kb : decl;
    const bool input = !decl || decl->access != ir::Access::write;
    if (b.unique_loaded && input) read.emplace_back(b.name, b.unique_loaded);
    if (b.unique_stored) written.emplace_back(b.name, b.unique_stored);
  }
  return {check_term("bytes_read", evaluate(k.cost.bytes_read, env), read),
          check_term("bytes_written", evaluate(k.cost.bytes_written, env), written)};
}

KernelAdvice advise_family(const ir::Kernel& k, const MemberCounters& counters) {
  KernelAdvice a;
  a.kernel = &k;
  a.counted_variant = &counted_variant(k);
  a.test = realistic_case(k);
  if (!a.test) return a.skipped = "no test case runs the family's first types", a;
  try {
    for (const ir::TestCase* t : family_cases(k)) {
      for (const auto& v : k.variants) {
        if (accepts(k, v, *t)) a.family.push_back(predict_family(k, v, *t, counters));
      }
    }
  } catch (const std::exception& e) {
    a.family.clear();
    a.skipped = fmt::format("a dispatch's dims cannot be evaluated: {}", e.what());
  }
  return a;
}

KernelAdvice advise(const ir::Kernel& k, const CountFn& count) {
  if (k.is_family()) return advise_family(k, {});
  KernelAdvice a;
  a.kernel = &k;
  a.counted_variant = &counted_variant(k);
  a.test = realistic_case(k);
  if (!a.test) return a.skipped = "no test case runs the default variant", a;
  if (count) count_default(a, count);
  for (const auto& v : k.variants) {
    if (!accepts(k, v, *a.test)) continue;
    a.points.push_back(make_point(k, v, *a.counted_variant, *a.test, a.counters));
    // Per tune point, of the counted types only: the other types' tune points repeat the findings.
    if (v.types == a.counted_variant->types) add_findings(a.findings, static_lints(k, a.points.back(), *a.test));
  }
  add_findings(a.findings, case_lints(k, *a.test));
  return a;
}

}  // namespace mtlgen::advisor
