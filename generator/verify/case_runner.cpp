#include "verify/case_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>
#include <cstring>
#include <memory>

#include "emit_msl/msl_emitter.h"
#include "verify/elements.h"
#include "verify/guarded_buffer.h"
#include "verify/inputs.h"

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

// One simulated run: lane order, which output poison, whether threadgroup memory starts as NaN
// poison or as zeros. Run 0 is the baseline compared with the reference.
using Placement = GuardedBuffer::Placement;
struct RunSpec {
  mtlsim::LaneOrder order;
  int output_poison;
  bool zeroed_threadgroup_memory;
  Placement placement;  // end flush catches overruns at once, start flush underruns
  const char* label;
};
constexpr RunSpec kRuns[] = {
    {mtlsim::LaneOrder::forward, 0, false, Placement::flush_end, "forward order"},
    {mtlsim::LaneOrder::reverse, 1, false, Placement::flush_start, "reverse order"},
    {mtlsim::LaneOrder::shuffled, 0, false, Placement::flush_end, "shuffled order"},
    {mtlsim::LaneOrder::forward, 1, true, Placement::flush_end, "zeroed threadgroup memory"},
};

struct Buffer {
  const ir::Buffer* decl = nullptr;
  ir::ScalarType type = ir::ScalarType::f32;
  std::vector<int64_t> shape;
  size_t elements = 0;
  std::unique_ptr<GuardedBuffer> sim;
  std::vector<uint8_t> initial;                  // inputs and read_write buffers
  std::vector<std::vector<uint8_t>> snapshots;   // per run, outputs only
  bool is_output() const { return decl->is_output(); }
  size_t bytes() const { return elements * static_cast<size_t>(ir::info(type).size); }
};

class CaseRun {
 public:
  explicit CaseRun(const CaseRequest& r)
      : r_(r), k_(*r.kernel), v_(*r.variant), t_(*r.test), body_line_(body_marker_line(k_)),
        constants_(r.constants.empty() ? k_.default_constants() : r.constants) {}

  CaseResult run() {
    env_ = ir::Kernel::env_for(t_.dims, v_);
    make_buffers();
    params_ = make_params();
    arguments_ = make_arguments();
    for (size_t i = 0; i < std::size(kRuns); ++i) {
      if (!simulate(kRuns[i], i == 0)) break;
    }
    if (!simulator_failed_) check_runs();  // data races do not stop the other checkers
    if (result_.status != CaseStatus::error && !simulator_failed_) compare_with_reference();
    if (!result_.problems.empty() && result_.status == CaseStatus::pass) result_.status = CaseStatus::fail;
    return std::move(result_);
  }

 private:

  void make_buffers() {
    uint64_t seed = t_.seed.value_or(k_.tests.seed);
    for (const auto& decl : k_.buffers) {
      Buffer b;
      b.decl = &decl;
      b.type = decl.type.resolve(v_.types);
      b.elements = 1;
      for (const auto& e : decl.shape) {
        b.shape.push_back(expr::evaluate(e, env_));
        b.elements *= static_cast<size_t>(std::max<int64_t>(b.shape.back(), 0));
      }
      b.sim = std::make_unique<GuardedBuffer>(decl.name, b.bytes(), ir::info(b.type).size);
      if (decl.access != ir::Access::write) {
        b.initial.resize(b.bytes());
        auto fill = t_.inputs.count(decl.name) ? t_.inputs.at(decl.name) : k_.tests.default_fill;
        fill_input(fill, b.type, b.initial.data(), b.elements, buffer_seed(seed, decl.name));
      }
      buffers_.push_back(std::move(b));
    }
  }

  std::vector<uint8_t> make_params() const {
    std::vector<uint8_t> blob;
    auto push = [&](const void* p) { blob.insert(blob.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + 4); };
    for (const auto& f : k_.params_fields) {
      if (f.is_dim) {
        uint32_t v = static_cast<uint32_t>(t_.dims.at(f.name));
        push(&v);
        continue;
      }
      double value = scalar_value(f.name);
      uint8_t bytes[4];
      store_element(f.type, bytes, 0, value);
      push(bytes);
    }
    return blob;
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
    mtlsim::DispatchOptions o;
    uint32_t* grid[3] = {&o.threadgroups.x, &o.threadgroups.y, &o.threadgroups.z};
    uint32_t* tg[3] = {&o.threads_per_threadgroup.x, &o.threads_per_threadgroup.y, &o.threads_per_threadgroup.z};
    for (int axis = 0; axis < k_.dispatch.rank(); ++axis) {
      *grid[axis] = static_cast<uint32_t>(expr::evaluate(k_.dispatch.threadgroups[axis], env_));
      *tg[axis] = static_cast<uint32_t>(v_.threadgroup_shape[axis]);
    }
    for (size_t i = 0; i < k_.threadgroup_arrays.size(); ++i) {
      const ir::ThreadgroupArray& a = k_.threadgroup_arrays[i];
      mtlsim::ThreadgroupArraySpec spec;
      spec.bytes = static_cast<size_t>(v_.threadgroup_array_bytes[i]);
      spec.poison = run.zeroed_threadgroup_memory ? std::vector<uint8_t>{0} : tg_poison(a.type.resolve(v_.types));
      spec.name = a.name;
      spec.element_size = static_cast<size_t>(ir::info(a.type.resolve(v_.types)).size);
      o.threadgroup_arrays.push_back(std::move(spec));
    }
    o.zero_threadgroup_variables = run.zeroed_threadgroup_memory;  // `threadgroup` arrays declared in bodies
    o.order = run.order;
    o.seed = r_.order_seed;
    o.workers = r_.workers;
    o.kernel_name = v_.entry_point;
    return o;
  }

  static std::vector<uint8_t> tg_poison(ir::ScalarType t) {
    if (t == ir::ScalarType::f16) return mtlsim::poison_pattern_f16();
    if (t == ir::ScalarType::bf16) return mtlsim::poison_pattern_bf16();
    return mtlsim::poison_pattern_f32();
  }

  // Returns false when the simulator reported issues (the outputs are then meaningless).
  bool simulate(const RunSpec& run, bool baseline) {
    std::vector<void*> slots;
    for (auto& b : buffers_) {
      b.sim->place(run.placement);
      if (b.decl->access == ir::Access::write) {
        auto pattern = output_poison(b.type, run.output_poison);
        for (size_t i = 0; i < b.bytes(); ++i) static_cast<uint8_t*>(b.sim->data())[i] = pattern[i % pattern.size()];
      } else {
        std::memcpy(b.sim->data(), b.initial.data(), b.bytes());
      }
      slots.push_back(b.sim->data());
    }
    slots.push_back(params_.data());
    for (auto& blob : arguments_) slots.push_back(blob.data());
    mtlsim::DispatchOptions options = dispatch_options(run);
    if (baseline && r_.exact_races) watch_for_races(options);
    r_.module->function_constants_fn()(constants_.data());
    double start = monotonic_seconds();
    auto result = mtlsim::dispatch(options, r_.module->thread_fn(v_), slots.data());
    if (baseline) {
      result_.sim_seconds = monotonic_seconds() - start;
      result_.fiber_switches = result.fiber_switches;
    }
    for (auto& b : buffers_) {
      if (b.is_output()) {
        auto* p = static_cast<const uint8_t*>(b.sim->data());
        b.snapshots.emplace_back(p, p + b.bytes());
      }
    }
    add_issues(result);
    add_races(result);
    simulator_failed_ = !result.ok();
    return result.ok();
  }

  // Buffers the kernel writes (read-only ones cannot race) and, always, threadgroup arrays.
  void watch_for_races(mtlsim::DispatchOptions& o) const {
    o.detect_races = true;
    for (const auto& b : buffers_) {
      if (b.decl->access == ir::Access::read) continue;
      o.race_buffers.push_back({b.decl->name, b.sim->data(), b.bytes(), static_cast<size_t>(ir::info(b.type).size)});
    }
  }

  void add_races(mtlsim::DispatchResult& result) {
    if (result.races.empty()) return;
    const size_t kept = result.races.size();
    mtlsim::resolve_race_sources(result.races);
    for (const auto& race : result.races) add_problem("data_race", with_spec_lines(mtlsim::describe(race, v_.entry_point)));
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
  // "line 36 (specs/x.yaml:21)" for lines inside the kernel body.
  std::string with_spec_lines(const std::string& message) const {
    std::string out;
    size_t pos = 0;
    while (true) {
      size_t at = message.find("line ", pos);
      if (at == std::string::npos) break;
      size_t end = at + 5;
      while (end < message.size() && std::isdigit(static_cast<unsigned char>(message[end]))) ++end;
      out += message.substr(pos, end - pos);
      if (end > at + 5) {
        int line = std::stoi(message.substr(at + 5, end - at - 5));
        if (k_.is_source()) {
          out += fmt::format(" ({}:{})", k_.source->file, line);  // the simulator keeps the file's lines
        } else if (body_line_ > 0 && line > body_line_) {
          out += fmt::format(" ({}:{})", k_.spec_path, k_.body.loc.line + line - body_line_ - 1);
        }
      }
      pos = end;
    }
    return out + message.substr(pos);
  }

  // Line of the body marker in the emitted .metal; the body starts on the next line.
  static int body_marker_line(const ir::Kernel& k) {
    if (k.is_source()) return 0;
    std::string msl = emit::msl_source(k);
    size_t at = msl.find(emit::kBodyMarker);
    return at == std::string::npos ? 0 : static_cast<int>(std::count(msl.begin(), msl.begin() + at, '\n')) + 1;
  }

  void add_problem(std::string checker, std::string message) {
    for (const auto& p : result_.problems) {
      if (p.message == message) return;
    }
    result_.problems.push_back({std::move(checker), std::move(message)});
  }

  bool unwritten(const Buffer& b, size_t i) const {
    size_t size = static_cast<size_t>(ir::info(b.type).size);
    return b.decl->access == ir::Access::write &&
           equals_pattern(b.snapshots[0].data() + i * size, output_poison(b.type, 0)) &&
           equals_pattern(b.snapshots[1].data() + i * size, output_poison(b.type, 1));
  }

  void check_runs() {
    for (const auto& b : buffers_) {
      if (!b.is_output()) continue;
      check_unwritten(b);
      check_difference(b, 1, "race");
      check_difference(b, 2, "race");
      check_difference(b, 3, "uninitialised-threadgroup-memory");
    }
  }

  void check_unwritten(const Buffer& b) {
    std::vector<std::string> names;
    size_t count = 0;
    for (size_t i = 0; i < b.elements; ++i) {
      if (!unwritten(b, i)) continue;
      if (count++ < 5) names.push_back(element_name(b.decl->name, b.shape, i));
    }
    if (count == 0) return;
    add_problem("unwritten-output",
                fmt::format("{}: {} of {} elements of output `{}` were never written: {}{}. Is the grid rounded down "
                            "instead of up (ceil_div), or does a bounds check skip them?",
                            v_.entry_point, count, b.elements, b.decl->name, fmt::join(names, ", "),
                            count > names.size() ? ", ..." : ""));
  }

  void check_difference(const Buffer& b, size_t run, const char* checker) {
    size_t size = static_cast<size_t>(ir::info(b.type).size);
    std::vector<std::string> examples;
    size_t count = 0;
    for (size_t i = 0; i < b.elements; ++i) {
      const uint8_t* base = b.snapshots[0].data() + i * size;
      const uint8_t* other = b.snapshots[run].data() + i * size;
      if (std::memcmp(base, other, size) == 0 || unwritten(b, i)) continue;
      if (count++ < 3) {
        examples.push_back(fmt::format("{} = {:.9g} ({}) but {:.9g} ({})", element_name(b.decl->name, b.shape, i),
                                       load_element(b.type, b.snapshots[0].data(), i), kRuns[0].label,
                                       load_element(b.type, b.snapshots[run].data(), i), kRuns[run].label));
      }
    }
    if (count == 0) return;
    bool race = std::string(checker) == "race";
    add_problem(checker,
                fmt::format("{}: output `{}` {}: {} elements differ, e.g. {}. {}", v_.entry_point, b.decl->name,
                            race ? "depends on the order threads run in" : "depends on uninitialised threadgroup memory",
                            count, fmt::join(examples, "; "),
                            race ? "A threadgroup-memory write and a read by another thread need a threadgroup_barrier "
                                   "between them, or threads race on the same device memory."
                                 : "Some thread reads threadgroup memory before any thread of its threadgroup wrote it."));
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
    size_t dims_bytes = 4 * k_.dims.size();
    char error[1024] = "";
    double start = monotonic_seconds();
    auto fn = r_.module->reference_fn(reference_symbol(k_, v_));
    if (fn(slots.data(), elements.data(), params_.data(), params_.data() + dims_bytes, constants_.data(), error,
           sizeof error) != 0) {
      result_.status = CaseStatus::error;
      add_problem("error", fmt::format("the reference rejected this case: {}", error));
      return;
    }
    result_.reference_seconds = monotonic_seconds() - start;
    for (size_t i = 0; i < buffers_.size(); ++i) {
      const Buffer& b = buffers_[i];
      if (!b.is_output()) continue;
      auto tol = tolerance_for(k_.tests, b.type);
      auto stats = compare_output(b.decl->name, b.type, b.shape, b.snapshots[0].data(), ref[i].data(), b.elements, tol);
      if (stats.mismatches || stats.nmse_failed) add_mismatch(stats, tol);
      result_.outputs.push_back(std::move(stats));
    }
  }

  void add_mismatch(const OutputStats& s, const ir::Tolerance& tol) {
    std::string limits;
    if (tol.exact) limits = "exact";
    if (tol.max_abs) limits += fmt::format(" max_abs {:g}", *tol.max_abs);
    if (tol.max_rel) limits += fmt::format(" max_rel {:g}", *tol.max_rel);
    if (tol.nmse) limits += fmt::format(" nmse {:g}", *tol.nmse);
    std::string nonfinite =
        s.nonfinite_mismatches ? fmt::format(" ({} with NaN or inf, not in the stats)", s.nonfinite_mismatches) : "";
    add_problem("mismatch", fmt::format("{}: output `{}` differs from the reference in {} of {} elements{} (max abs {:.3g}, "
                                        "max rel {:.3g}, nmse {:.3g}; tolerance{}): {}{}{}",
                                        v_.entry_point, s.buffer, s.mismatches, s.elements, nonfinite, s.max_abs, s.max_rel,
                                        s.nmse, limits, fmt::join(s.examples, "; "),
                                        s.mismatches > s.examples.size() ? "; ..." : "", simd_hint()));
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
    if (!simd_reduce || tg_stage || explained || v_.threads_per_threadgroup <= 32) return "";
    return fmt::format(". Hint: the body reduces with simd_* functions and never synchronises its threadgroup; "
                       "simd_* cover one simdgroup (32 threads), but this variant runs {} threads per threadgroup: "
                       "reduce across simdgroups too (tg_sum<TG>, tg_max<TG>, tg_min<TG>)",
                       v_.threads_per_threadgroup);
  }

  const CaseRequest& r_;
  const ir::Kernel& k_;
  const ir::Variant& v_;
  const ir::TestCase& t_;
  expr::Env env_;
  std::vector<Buffer> buffers_;
  std::vector<uint8_t> params_;
  std::vector<std::vector<uint8_t>> arguments_;  // hand-written kernels' argument parameters
  CaseResult result_;
  bool simulator_failed_ = false;
  int body_line_ = 0;
  ir::ConstantSetting constants_;
};

}  // namespace

CaseResult run_case(const CaseRequest& request) {
  try {
    return CaseRun(request).run();
  } catch (const std::exception& e) {
    CaseResult r;
    r.status = CaseStatus::error;
    r.problems.push_back({"error", e.what()});
    return r;
  }
}

nlohmann::json to_json(const CaseResult& r) {
  nlohmann::json j;
  j["status"] = to_string(r.status);
  j["problems"] = nlohmann::json::array();
  for (const auto& p : r.problems) j["problems"].push_back({{"checker", p.checker}, {"message", p.message}});
  j["outputs"] = nlohmann::json::array();
  for (const auto& o : r.outputs) {
    j["outputs"].push_back({{"buffer", o.buffer}, {"elements", o.elements}, {"max_abs", o.max_abs}, {"max_rel", o.max_rel},
                            {"nmse", o.nmse}, {"mismatches", o.mismatches}, {"nonfinite_mismatches", o.nonfinite_mismatches}});
  }
  j["sim_seconds"] = r.sim_seconds;
  j["reference_seconds"] = r.reference_seconds;
  j["fiber_switches"] = r.fiber_switches;
  return j;
}

CaseResult case_result_from_json(const nlohmann::json& j) {
  CaseResult r;
  std::string status = j.at("status");
  for (auto s : {CaseStatus::pass, CaseStatus::fail, CaseStatus::crash, CaseStatus::hang, CaseStatus::error,
                 CaseStatus::skipped}) {
    if (status == to_string(s)) r.status = s;
  }
  for (const auto& p : j.at("problems")) r.problems.push_back({p.at("checker"), p.at("message")});
  for (const auto& o : j.at("outputs")) {
    OutputStats s;
    s.buffer = o.at("buffer");
    s.elements = o.at("elements");
    s.max_abs = o.at("max_abs");
    s.max_rel = o.at("max_rel");
    s.nmse = o.at("nmse");
    s.mismatches = o.at("mismatches");
    s.nonfinite_mismatches = o.at("nonfinite_mismatches");
    r.outputs.push_back(std::move(s));
  }
  r.sim_seconds = j.at("sim_seconds");
  r.reference_seconds = j.at("reference_seconds");
  r.fiber_switches = j.at("fiber_switches");
  return r;
}

// ---- isolation in a child process ----

namespace {

int g_report_fd = -1;
const char* g_entry_point = "";

const char* signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV (invalid memory access)";
    case SIGBUS: return "SIGBUS (misaligned or invalid memory access)";
    case SIGFPE: return "SIGFPE (integer division by zero?)";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT (abort)";
  }
  return "a fatal signal";
}

// What a fault far from every buffer most likely was. The kernel reports an access through a
// non-canonical pointer (a huge or negative index) as a general protection fault without an address.
const char* fault_hint(int sig, const siginfo_t* info) {
  if (sig != SIGSEGV) return "";
  if (info->si_code == SI_KERNEL) {
    return " (no address: the pointer was far outside any buffer - an index that overflowed or went negative?)";
  }
  if (reinterpret_cast<uintptr_t>(info->si_addr) < 4096) return " (a null pointer)";
  return " (outside every buffer)";
}

void on_crash(int sig, siginfo_t* info, void* context) {
  char where[512] = "";
  auto address = reinterpret_cast<uintptr_t>(info->si_addr);
  bool is_write = false;
#if defined(__x86_64__)
  is_write = sig == SIGSEGV && (static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_ERR] & 2);
#else
  (void)context;
#endif
  bool known = (sig == SIGSEGV || sig == SIGBUS) && describe_fault(address, where, sizeof where);
  char thread[256] = "outside any kernel thread";
  if (const auto* tc = mtlsim::current_thread_context()) {
    std::snprintf(thread, sizeof thread, "thread %u of threadgroup (%u, %u, %u)", tc->thread_index_in_threadgroup,
                  tc->threadgroup_position_in_grid.x, tc->threadgroup_position_in_grid.y,
                  tc->threadgroup_position_in_grid.z);
  }
  char message[1200];
  int n = known ? std::snprintf(message, sizeof message, "CRASH out-of-bounds %s of %s, by %s of %s", is_write ? "write" : "read",
                                where, thread, g_entry_point)
                : std::snprintf(message, sizeof message, "CRASH %s at address %p%s in %s of %s", signal_name(sig),
                                info->si_addr, fault_hint(sig, info), thread, g_entry_point);
  if (n > 0) (void)!::write(g_report_fd, message, static_cast<size_t>(std::min<int>(n, sizeof message - 1)));
  ::_exit(128 + sig);
}

void install_crash_handlers() {
  static char alt_stack[64 * 1024];
  stack_t ss{};
  ss.ss_sp = alt_stack;
  ss.ss_size = sizeof alt_stack;
  ::sigaltstack(&ss, nullptr);
  struct sigaction sa{};
  sa.sa_sigaction = on_crash;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::sigaction(sig, &sa, nullptr);
}

[[noreturn]] void child_main(const CaseRequest& request, int fd) {
  g_report_fd = fd;
  g_entry_point = request.variant->entry_point.c_str();
  install_crash_handlers();
  std::string report = to_json(run_case(request)).dump();
  size_t done = 0;
  while (done < report.size()) {
    ssize_t n = ::write(fd, report.data() + done, report.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::_exit(0);
}

CaseResult failure(CaseStatus status, std::string checker, std::string message) {
  CaseResult r;
  r.status = status;
  r.problems.push_back({std::move(checker), std::move(message)});
  return r;
}

}  // namespace

RunningCase start_case(const CaseRequest& request, double watchdog_seconds) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe() failed");
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork() failed");
  if (pid == 0) {
    ::close(fds[0]);
    child_main(request, fds[1]);
  }
  ::close(fds[1]);
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  return RunningCase{pid, fds[0], {}, monotonic_seconds() + watchdog_seconds};
}

bool poll_case(RunningCase& running, CaseResult& result, double watchdog_seconds) {
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(running.fd, buffer, sizeof buffer);
    if (n > 0) {
      running.received.append(buffer, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (monotonic_seconds() < running.deadline) return false;
      ::kill(running.pid, SIGKILL);
      ::waitpid(running.pid, nullptr, 0);
      ::close(running.fd);
      result = failure(CaseStatus::hang, "hang",
                       fmt::format("did not finish within {:g} s (watchdog): an endless loop, or a wait on a "
                                   "condition no thread will make true? Raise --timeout for very large cases.",
                                   watchdog_seconds));
      return true;
    }
    break;  // EOF (or an error): the child is done
  }
  ::close(running.fd);
  int status = 0;
  ::waitpid(running.pid, &status, 0);
  const std::string& text = running.received;
  if (text.rfind("CRASH ", 0) == 0) {
    result = failure(CaseStatus::crash, "crash", "crashed: " + text.substr(6));
  } else if (WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0) || text.empty()) {
    result = failure(CaseStatus::crash, "crash",
                     fmt::format("the simulation process died ({}) without a report",
                                 WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "non-zero exit"));
  } else {
    result = case_result_from_json(nlohmann::json::parse(text));
  }
  return true;
}

}  // namespace mtlgen::verify
