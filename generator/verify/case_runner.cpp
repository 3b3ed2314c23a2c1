#include "verify/case_runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <cstring>
#include <limits>
#include <memory>

#include "emit_common/emitter.h"
#include "emit_msl/msl_emitter.h"
#include "verify/access_counts.h"
#include "verify/case_phase.h"
#include "verify/dispatch_setup.h"
#include "verify/elements.h"
#include "verify/family_runner.h"
#include "verify/guarded_buffer.h"
#include "verify/host_buffer.h"
#include "verify/inputs.h"
#include "verify/run_checks.h"

namespace mtlgen::verify {

const char* to_string(CaseStatus s) {
  switch (s) {
    case CaseStatus::pass: return "PASS";
    case CaseStatus::fail: return "FAIL";
    case CaseStatus::crash: return "CRASH";
    case CaseStatus::hang: return "HANG";
    case CaseStatus::error: return "ERROR";
    case CaseStatus::skipped: return "SKIP";
  }
  return "?";
}

double monotonic_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

namespace {

// What the case's child is doing, for reports of a crash or an exit: spec code runs while the
// module loads (file-scope constructors), in the kernel and in the reference.
std::atomic<const char*> g_phase{"preparing the case"};
constexpr const char* kPhaseSetup = "while evaluating the spec's shapes, grid and inputs for the case";
constexpr const char* kPhaseLoad = "while loading the simulator module (in a file-scope constructor of the body, "
                                   "reference or the files they include)";
constexpr const char* kPhaseKernel = "in the kernel";
constexpr const char* kPhaseChecks = "while checking the kernel's outputs";
constexpr const char* kPhaseReference = "in the reference";

void enter_spec_code(const char* phase) { g_phase = phase; }

using Placement = GuardedBuffer::Placement;

class CaseRun {
 public:
  CaseRun(const CaseRequest& r, const LoadedModule& module)
      : r_(r), m_(module), k_(*r.kernel), v_(*r.variant), t_(*r.test), msl_(k_.is_source() ? std::string() : emit::msl_source(k_)),
        constants_(r.constants.empty() ? k_.default_constants() : r.constants) {}

  CaseResult run() {
    g_phase = kPhaseSetup;
    env_ = ir::Kernel::env_for(t_.dims, v_);
    make_buffers();
    if (!describe_dispatch()) return std::move(result_);
    if (every_output_write_only()) sampled_ = sample_threadgroups(host_, r_.quick_threadgroups, r_.order_seed);
    arguments_ = make_arguments();
    for (size_t i = 0; i < std::size(kRuns); ++i) {
      if (!simulate(kRuns[i], i == 0)) break;
    }
    if (!simulator_failed_) check_runs();  // data races do not stop the other checkers
    if (result_.status != CaseStatus::error && !simulator_failed_) compare_with_reference();
    result_.output_digest = output_digest();
    report_poison_flows();
    if (!result_.problems.empty() && result_.status == CaseStatus::pass) result_.status = CaseStatus::fail;
    return std::move(result_);
  }

 private:

  void make_buffers() { buffers_ = simulated_buffers(k_, v_, t_, env_); }

  // The dispatch as the generated host description computes it (the glue's code): false, with an
  // `error` problem, where it disagrees with the spec.
  bool describe_dispatch() {
    std::string problem = describe_host_dispatch(m_, k_, v_, t_.dims, scalar_fn(), host_);
    if (problem.empty()) {
      params_ = params_bytes(host_);
      return true;
    }
    result_.status = CaseStatus::error;
    add_problem("error", problem);
    return false;
  }

  // Quick mode tells what the sampled threadgroups wrote by the output poison, which a
  // read_write output does not start with: such a kernel runs whole.
  bool every_output_write_only() const {
    return std::all_of(k_.buffers.begin(), k_.buffers.end(),
                       [](const ir::Buffer& b) { return !b.is_output() || b.access == ir::Access::write; });
  }

  ScalarValue scalar_fn() const {
    return [this](const std::string& name) { return scalar_value(name); };
  }

  // The bytes of each argument parameter of a hand-written kernel, laid out as Metal lays out
  // the struct (offsets from the front end), values from dims, tunables and scalars.
  std::vector<std::vector<uint8_t>> make_arguments() const {
    std::vector<std::vector<uint8_t>> blobs;
    for (const auto& blob : v_.arguments) {
      std::vector<uint8_t> bytes(std::max<uint64_t>(blob.bytes, 16), 0);
      for (const auto& slot : blob.slots) store_argument(slot, bytes.data() + slot.offset);
      blobs.push_back(std::move(bytes));
    }
    return blobs;
  }

  void store_argument(const ir::ArgumentSlot& slot, uint8_t* at) const {
    using Kind = ir::ArgumentSlot::Kind;
    if (slot.kind == Kind::floating) {
      double value = slot.scalar.empty() ? double(expr::evaluate(*slot.integer, env_)) : scalar_value(slot.scalar);
      store_element(slot.size == 2 ? ir::ScalarType::f16 : ir::ScalarType::f32, at, 0, value);
      return;
    }
    int64_t value = slot.scalar.empty() ? expr::evaluate(*slot.integer, env_) : int64_t(scalar_value(slot.scalar));
    if (slot.kind == Kind::boolean) value = value != 0;
    std::memcpy(at, &value, static_cast<size_t>(slot.size));  // little-endian: the low bytes
  }

  double scalar_value(const std::string& name) const {
    return t_.scalars.count(name) ? t_.scalars.at(name) : scalar_default(name);
  }

  double scalar_default(const std::string& name) const {
    for (const auto& s : k_.scalars) {
      if (s.name == name) return s.default_value;
    }
    return 0;
  }

  mtlsim::DispatchOptions dispatch_options(const RunSpec& run) const {
    mtlsim::DispatchOptions o = verify::dispatch_options(k_, v_, host_, run, r_.order_seed, r_.workers);
    o.only_threadgroups = sampled_;
    o.group_fn = m_.group_fn(v_);
    o.exec = r_.exec;
    return o;
  }

  // Returns false when the simulator reported issues (the outputs are then meaningless).
  bool simulate(const RunSpec& run, bool baseline) {
    std::vector<void*> buffers, arguments;
    for (auto& b : buffers_) {
      b.start_run(run.placement, run.output_poison);
      buffers.push_back(b.sim->data());
    }
    for (auto& blob : arguments_) arguments.push_back(blob.data());
    std::vector<void*> slots = launcher_slots(k_, v_, buffers, params_.data(), arguments);
    mtlsim::DispatchOptions options = dispatch_options(run);
    if (baseline && r_.exact_races) watch_for_races(options);
    enter_spec_code(kPhaseKernel);
    m_.set_function_constants(k_, constants_);
    remember_kernel_code(reinterpret_cast<const void*>(m_.thread_fn(v_)));  // a crash names its line
    if (baseline && r_.count_accesses) start_counting(counted_buffers());
    double start = monotonic_seconds();
    auto result = mtlsim::dispatch(options, m_.thread_fn(v_), slots.data());
    g_phase = kPhaseChecks;
    if (baseline && r_.count_accesses) result_.counters = finish_counting(counted_buffers(), host_);
    if (baseline) {
      result_.sim_seconds = monotonic_seconds() - start;
      result_.fiber_switches = result.fiber_switches;
      result_.threadgroups_as_loops = result.threadgroups_as_loops;
    }
    for (auto& b : buffers_) {
      if (b.decl->is_output()) {
        auto* p = static_cast<const uint8_t*>(b.sim->data());
        b.snapshots.emplace_back(p, p + b.bytes());
      }
    }
    if (baseline && r_.exact_races) last_writes_ = std::move(result.last_writes);
    check_canaries();
    add_issues(result);
    if (baseline) add_poison_uses(result);
    for (auto& flow : result.poison_flows) poison_flows_.push_back(std::move(flow));
    add_races(result);
    simulator_failed_ = !result.ok();
    return result.ok();
  }

  std::vector<CountedBuffer> counted_buffers() const {
    std::vector<CountedBuffer> out;
    for (const auto& b : buffers_) out.push_back({b.decl->name, b.sim->data(), b.bytes()});
    return out;
  }

  // Poison that passed through a collective matters only where the kernel's outputs depend on it:
  // they then change with what uninitialised threadgroup memory holds, or differ from the
  // reference. Lanes whose results depend on it get poison; results no lane uses are harmless.
  void report_poison_flows() {
    bool used = false;
    for (const auto& p : result_.problems)
      used = used || p.checker == "uninitialised-threadgroup-memory" || p.checker == "mismatch";
    if (!used) return;
    std::vector<int> lines;  // one report per collective, whichever run saw it first
    for (const auto& flow : poison_flows_) {
      if (flow.receivers == 0 || std::find(lines.begin(), lines.end(), flow.line) != lines.end()) continue;
      lines.push_back(flow.line);
      add_problem("poison_in_collective",
                  with_spec_lines(flow.message) + " Outputs depend on uninitialised threadgroup memory (see the "
                                                  "other reports of this case), and it passed through here.");
    }
  }

  // Poison that decided a comparison or became an integer is a finding whatever the outputs say.
  // Its pc becomes a line in the parent (resolve_fault_pc).
  void add_poison_uses(const mtlsim::DispatchResult& result) {
    for (const auto& use : result.poison_uses) {
      char where[1024] = "";
      describe_fault_pc(use.pc, where, sizeof where);
      add_problem(mtlsim::to_string(use.kind), mtlsim::describe(use, v_.entry_point, where));
    }
  }

  // Writes into a buffer's alignment slack (which no guard page covers) left a changed canary.
  // The first run that changed a buffer's canary reports it; with the exact race detector on, the
  // report names the line that wrote there (its shadow covers the slack).
  void check_canaries() {
    for (size_t i = 0; i < buffers_.size(); ++i) {
      const SimulatedBuffer& b = buffers_[i];
      auto element = b.sim->overwritten_canary();
      const std::string what = fmt::format("out-of-bounds write of element {} of buffer `{}`", element.value_or(0), b.decl->name);
      if (!element || std::any_of(result_.problems.begin(), result_.problems.end(),
                                  [&](const Problem& p) { return p.message.find(what) != std::string::npos; })) {
        continue;
      }
      mtlsim::RaceAccess writer = last_write(i, *element);
      std::string by = writer.pc ? "; " + mtlsim::describe_last_write(writer) : "";
      add_problem("out-of-bounds-write",
                  with_spec_lines(fmt::format("{}: {}, which holds {} elements (a canary in its alignment slack "
                                              "changed{}). Check the bound of the loop or the `if` that guards the store.",
                                              v_.entry_point, what, b.elements, by)));
    }
  }

  // Buffers the kernel writes (read-only ones cannot race) and, always, threadgroup arrays.
  void watch_for_races(mtlsim::DispatchOptions& o) const {
    o.detect_races = true;
    o.keep_last_writes = true;  // a mismatch names the line that last wrote its first wrong elements
    o.report_same_value_stores = r_.report_same_value_stores;
    for (const auto& b : buffers_) {
      if (b.decl->access == ir::Access::read) continue;
      // The alignment slack too: a write there (a changed canary) is then named by its line.
      o.race_buffers.push_back({b.decl->name, b.sim->data(), b.bytes() + b.sim->slack_bytes(),
                                static_cast<size_t>(ir::info(b.type).size)});
    }
  }

  void add_races(mtlsim::DispatchResult& result) {
    if (result.races.empty()) return;
    const size_t kept = result.races.size();
    mtlsim::resolve_race_sources(result.races);
    for (const auto& race : result.races) {
      std::string message = with_spec_lines(mtlsim::describe(race, v_.entry_point));
      if (race.memory_model_only()) result_.warnings.push_back({"memory_model", std::move(message)});
      else add_problem("data_race", std::move(message));
    }
    if (result.races_total > kept) {
      add_problem("data_race", fmt::format("{}: {} more data races (pairs of racing source locations) are not shown; "
                                           "fix the ones above first",
                                           v_.entry_point, result.races_total - kept));
    }
  }

  // One problem per kind and line; the same bug in every threadgroup is one bug.
  void add_issues(const mtlsim::DispatchResult& result) {
    std::map<std::pair<int, int>, size_t> repeats;
    std::vector<const mtlsim::SimIssue*> firsts;
    for (const auto& issue : result.issues) {
      if (repeats[{static_cast<int>(issue.kind), issue.line}]++ == 0) firsts.push_back(&issue);
    }
    for (const auto* issue : firsts) {
      size_t more = repeats[{static_cast<int>(issue->kind), issue->line}] - 1;
      std::string message = with_spec_lines(issue->message);
      if (more) message += fmt::format(" (and {} more threadgroups)", more);
      add_problem(mtlsim::to_string(issue->kind), message);
    }
  }

  // The simulator counts lines of the .metal file; users edit the spec. "line 36" becomes
  // "line 36 (specs/x.yaml:21)" for lines inside the kernel body or a prelude.
  std::string with_spec_lines(const std::string& message) const { return verify::with_spec_lines(k_, msl_, message); }

  void add_problem(std::string checker, std::string message) {
    add_unique_problem(result_, std::move(checker), std::move(message));
  }

  OutputRuns runs_of(const SimulatedBuffer& b) const {
    return {b.decl->name, b.type, b.shape, b.elements, b.decl->access == ir::Access::write, &b.snapshots};
  }

  void check_runs() {
    for (const auto& b : buffers_) {
      if (!b.decl->is_output()) continue;
      if (sampled_.empty()) check_unwritten(b);  // in quick mode most of the grid never runs
      check_difference(b, 1, "race");
      check_difference(b, 2, "race");
      check_difference(b, 3, "uninitialised-threadgroup-memory");
    }
  }

  void check_unwritten(const SimulatedBuffer& b) {
    ElementFinding f = unwritten_elements(runs_of(b));
    if (f.count == 0) return;
    add_problem("unwritten-output",
                fmt::format("{}: {} of {} elements of output `{}` were never written: {}{}. Is the grid{} rounded "
                            "down instead of up (ceil_div), or does a bounds check skip them?",
                            v_.entry_point, f.count, b.elements, b.decl->name, fmt::join(f.examples, ", "),
                            f.count > f.examples.size() ? ", ..." : "",
                            k_.dispatch.loc.line > 0
                                ? fmt::format(" (dispatch at {}:{})", k_.dispatch.loc.file, k_.dispatch.loc.line)
                                : ""));
  }

  void check_difference(const SimulatedBuffer& b, size_t run, const char* checker) {
    ElementFinding f = run_difference(runs_of(b), run);
    if (f.count == 0) return;
    add_problem(checker, fmt::format("{}: output `{}` depends on {}: {} elements differ, e.g. {}. {}", v_.entry_point,
                                     b.decl->name, difference_cause(checker), f.count, fmt::join(f.examples, "; "),
                                     difference_advice(checker)));
  }

  static const char* difference_cause(const std::string& checker) {
    return checker == "race" ? "the order threads run in" : "uninitialised threadgroup memory";
  }

  static const char* difference_advice(const std::string& checker) {
    if (checker == "race") {
      return "A threadgroup-memory write and a read by another thread need a threadgroup_barrier between them, or "
             "threads race on the same device memory.";
    }
    return "Some thread reads threadgroup memory before any thread of its threadgroup wrote it.";
  }

  // FNV-1a of the baseline run's outputs: verify compares it with a run of the module built with
  // other initial bytes in private variables (see "uninitialised-private-memory" in verify.cpp).
  // Every NaN counts as one value: the two builds may give a NaN different signs (same_outcome).
  std::string output_digest() const {
    uint64_t h = 0xcbf29ce484222325ull;
    auto add = [&](uint8_t byte) { h = (h ^ byte) * 0x100000001b3ull; };
    for (const auto& b : buffers_) {
      if (!b.decl->is_output() || b.snapshots.empty()) continue;
      const std::vector<uint8_t>& bytes = b.snapshots[0];
      const size_t size = static_cast<size_t>(ir::info(b.type).size);
      for (size_t i = 0; i * size < bytes.size(); ++i) {
        const bool nan = is_nan_element(b.type, bytes.data(), i);
        for (size_t j = 0; j < size && i * size + j < bytes.size(); ++j) add(nan ? 0xff : bytes[i * size + j]);
      }
    }
    return fmt::format("{:016x}", h);
  }

  void compare_with_reference() {
    std::vector<std::vector<uint8_t>> ref(buffers_.size());
    std::vector<void*> slots;
    std::vector<uint64_t> elements;
    for (size_t i = 0; i < buffers_.size(); ++i) {
      ref[i] = buffers_[i].initial.empty() ? std::vector<uint8_t>(buffers_[i].bytes()) : buffers_[i].initial;
      slots.push_back(ref[i].data());
      elements.push_back(buffers_[i].elements);
    }
    const std::vector<uint64_t> dims = dims_values(k_, t_.dims);
    const std::vector<double> scalars = scalar_values(k_, scalar_fn());
    char error[1024] = "";
    double start = monotonic_seconds();
    auto fn = m_.reference_fn(reference_symbol(k_, v_));
    enter_spec_code(kPhaseReference);
    int rc = fn(slots.data(), elements.data(), dims.data(), scalars.data(), constants_.data(), error, sizeof error);
    g_phase = kPhaseChecks;
    error[sizeof error - 1] = '\0';  // the reference's text, not trusted to end its string
    if (rc != 0) {
      result_.status = CaseStatus::error;
      add_problem("error", fmt::format("the reference rejected this case: {}", error));
      return;
    }
    result_.reference_seconds = monotonic_seconds() - start;
    for (size_t i = 0; i < buffers_.size(); ++i) {
      const SimulatedBuffer& b = buffers_[i];
      if (!b.decl->is_output()) continue;
      auto tol = tolerance_for(k_, b.decl->name, b.type);
      const std::vector<uint8_t> got = sampled_.empty() ? b.snapshots[0] : sampled_outputs(b, ref[i]);
      auto stats = compare_output(b.decl->name, b.type, b.shape, got.data(), ref[i].data(), b.elements, tol);
      if (stats.mismatches || stats.nmse_failed) add_mismatch(with_last_writes(stats, i), tol);
      result_.outputs.push_back(std::move(stats));
    }
  }

  // Quick mode: the baseline's output with every element the sampled threadgroups did not write
  // taken from the reference, so that only what ran is compared; says so in result_.coverage.
  std::vector<uint8_t> sampled_outputs(const SimulatedBuffer& b, const std::vector<uint8_t>& reference) {
    std::vector<uint8_t> got = b.snapshots[0];
    const std::vector<bool> written = written_elements(runs_of(b));
    const size_t size = static_cast<size_t>(ir::info(b.type).size);
    size_t compared = 0;
    for (size_t e = 0; e < b.elements; ++e) {
      if (written[e]) ++compared;
      else std::memcpy(got.data() + e * size, reference.data() + e * size, size);
    }
    const uint64_t total = host_.threadgroups[0] * host_.threadgroups[1] * host_.threadgroups[2];
    result_.coverage += fmt::format("{}{} of {} threadgroups, {} of {} elements of `{}` compared",
                                    result_.coverage.empty() ? "" : "; ", sampled_.size(), total, compared, b.elements,
                                    b.decl->name);
    return got;
  }

  // With the exact race detector on: each example names the line (and thread) that last wrote
  // the element in the baseline run.
  OutputStats with_last_writes(OutputStats s, size_t buffer) const {
    if (last_writes_.empty()) return s;
    std::vector<mtlsim::RaceAccess> writes;
    for (size_t e : s.example_elements) writes.push_back(last_write(buffer, e, false));
    mtlsim::resolve_access_sources(writes);
    for (size_t i = 0; i < writes.size() && i < s.examples.size(); ++i)
      s.examples[i] += " (" + mtlsim::describe_last_write(writes[i]) + ")";
    return s;
  }

  // The baseline's last write to an element of buffers_[buffer] (pc 0: none, or not recorded),
  // its line resolved unless `resolve` is false.
  mtlsim::RaceAccess last_write(size_t buffer, size_t element, bool resolve = true) const {
    size_t tracked = 0;  // race_buffers hold the buffers that are not read-only, in order
    for (size_t i = 0; i < buffer; ++i) tracked += buffers_[i].decl->access != ir::Access::read;
    if (tracked >= last_writes_.size() || element >= last_writes_[tracked].size()) return {};
    std::vector<mtlsim::RaceAccess> write{last_writes_[tracked][element]};
    if (resolve && write[0].pc) mtlsim::resolve_access_sources(write);
    return write[0];
  }

  void add_mismatch(const OutputStats& s, const ir::Tolerance& tol) {
    std::string limits;
    if (tol.exact) limits = " exact";
    if (tol.max_abs) limits += fmt::format(" max_abs {:g}", *tol.max_abs);
    if (tol.max_rel) limits += fmt::format(" max_rel {:g}", *tol.max_rel);
    if (tol.nmse) limits += fmt::format(" nmse {:g}", *tol.nmse);
    if (tol.peak_rel) limits += fmt::format(" peak_rel {:g}", *tol.peak_rel);
    std::string nonfinite =
        s.nonfinite_mismatches ? fmt::format(" ({} with NaN or inf, not in the stats)", s.nonfinite_mismatches) : "";
    // Statistics of the finite pairs only; when every differing element is NaN or inf they say nothing.
    std::string stats = s.nonfinite_mismatches == s.mismatches
                            ? ""
                            : fmt::format("max abs {:.3g}, max rel {:.3g}, nmse {:.3g}; ", s.max_abs, s.max_rel, s.nmse);
    add_problem("mismatch", with_spec_lines(fmt::format("{}: output `{}` differs from the reference in {} of {} elements{} ({}tolerance{}): "
                                        "{}{}{}",
                                        v_.entry_point, s.buffer, s.mismatches, s.elements, nonfinite, stats, limits,
                                        fmt::join(s.examples, "; "), s.mismatches > s.examples.size() ? "; ..." : "",
                                        simd_hint())));
  }

  // The classic: a reduction done with simd_* alone covers 32 threads of a larger threadgroup.
  // A body with a threadgroup barrier (or a tg_ helper) has a threadgroup stage of its own, so
  // the hint would only mislead there.
  std::string simd_hint() const {
    bool simd_reduce = false, tg_stage = !k_.helpers_used.empty();
    for (const char* f : {"simd_sum", "simd_max", "simd_min", "simd_prefix_inclusive_sum"}) {
      simd_reduce = simd_reduce || k_.body.text.find(f) != std::string::npos;
    }
    tg_stage = tg_stage || k_.body.text.find("threadgroup_barrier") != std::string::npos;
    bool explained = !result_.problems.empty();  // a race or poison report says more
    // A body that names its simdgroup (one result per simdgroup) reduces per simdgroup by design;
    // the helpers take the threadgroup size as TG, so a spec without that tunable gets no such advice.
    bool per_simdgroup = k_.body.text.find("simd_group") != std::string::npos;
    bool has_tg = std::any_of(k_.tunables.begin(), k_.tunables.end(), [](const auto& t) { return t.name == "TG"; });
    if (!simd_reduce || tg_stage || explained || per_simdgroup || !has_tg || v_.threads_per_threadgroup <= 32) return "";
    return fmt::format(". Hint: the body reduces with simd_* functions and never synchronises its threadgroup; "
                       "simd_* cover one simdgroup (32 threads), but this variant runs {} threads per threadgroup: "
                       "reduce across simdgroups too (tg_sum<TG>, tg_max<TG>, tg_min<TG>)",
                       v_.threads_per_threadgroup);
  }

  const CaseRequest& r_;
  const LoadedModule& m_;
  const ir::Kernel& k_;
  const ir::Variant& v_;
  const ir::TestCase& t_;
  expr::Env env_;
  std::vector<SimulatedBuffer> buffers_;
  std::vector<uint8_t> params_;
  mtlsim::HostDispatch host_;  // the glue's dispatch (describe_dispatch)
  std::vector<uint64_t> sampled_;  // quick mode's threadgroups; empty: the whole grid
  std::vector<std::vector<uint8_t>> arguments_;  // hand-written kernels' argument parameters
  CaseResult result_;
  bool simulator_failed_ = false;
  std::vector<mtlsim::SimIssue> poison_flows_;  // of every run; reported where outputs depend on them
  std::vector<std::vector<mtlsim::RaceAccess>> last_writes_;  // exact races: the baseline's, per tracked buffer
  std::string msl_;  // the emitted .metal whose lines the simulator reports (spec-body kernels)
  ir::ConstantSetting constants_;
};

}  // namespace

void add_unique_problem(CaseResult& r, std::string checker, std::string message) {
  for (const auto& p : r.problems) {
    if (p.message == message) return;
  }
  r.problems.push_back({std::move(checker), std::move(message)});
}

const char* case_phase() { return g_phase.load(); }
void enter_module_load() { enter_spec_code(kPhaseLoad); }

CaseResult run_case(const CaseRequest& request, const LoadedModule& module) {
  try {
    return CaseRun(request, module).run();
  } catch (const std::exception& e) {
    CaseResult r;
    r.status = CaseStatus::error;
    const char* phase = g_phase;  // an exception out of the reference lands here; say where it came from
    bool spec_code = phase == kPhaseReference || phase == kPhaseKernel;
    r.problems.push_back({"error", spec_code ? fmt::format("uncaught C++ exception {}: {}", phase, e.what()) : e.what()});
    return r;
  }
}

}  // namespace mtlgen::verify
