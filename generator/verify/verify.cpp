#include "verify/verify.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <thread>

#include "check_msl/checked_library.h"
#include "spec/library.h"
#include "support/exit_code.h"
#include "support/output_set.h"
#include "support/parallel.h"
#include "support/tool_identity.h"
#include "emit_msl/msl_emitter.h"
#include "verify/case_runner.h"
#include "verify/guarded_buffer.h"
#include "verify/result_cache.h"

namespace mtlgen::verify {

namespace {

struct WorkItem {
  const ir::Kernel* kernel;
  const ir::Variant* variant;
  const ir::TestCase* test;
  const SimModule* module;
  std::vector<const SimModule*> member_modules;  // a kernel family's: one per Family::kernels entry
  ir::ConstantSetting constants;  // one of kernel->constant_settings(*test)
  std::string skip_reason;        // a precondition of the variant excludes the case: not run
  size_t kernel_index = 0;        // of `kernel` in the run's kernels
};

struct Finished {
  WorkItem item;
  CaseResult result;
  bool from_cache = false;  // reported from the result cache, not run
};

// "<message> at TG=256, N_READS=4" when a per-variant precondition excludes the case, else "".
// (The front end evaluated these checks at every variant, so they cannot fail to evaluate here.)
std::string skip_reason(const ir::Kernel& k, const ir::Variant& v, const ir::TestCase& t) {
  std::string message = k.variant_violation(t.dims, v);
  return message.empty() ? "" : fmt::format("{} at {}", message, k.describe_tuning(v));
}

CaseResult skipped(const std::string& reason) {
  CaseResult r;
  r.status = CaseStatus::skipped;
  r.problems.push_back({"precondition", reason});
  return r;
}

// A family's kernels are kernels of the library (spec::load_library lists them): where they are in the run.
size_t kernel_index_of(const std::vector<ir::Kernel>& kernels, const std::string& name) {
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (kernels[i].name == name) return i;
  }
  throw std::logic_error("a family member is not in the run: " + name);
}

std::vector<const SimModule*> member_modules(const std::vector<ir::Kernel>& kernels,
                                            const std::vector<std::unique_ptr<SimModule>>& modules, const ir::Kernel& k) {
  std::vector<const SimModule*> out;
  if (!k.is_family()) return out;
  for (const auto& m : k.family->kernels) out.push_back(modules[kernel_index_of(kernels, m.name)].get());
  return out;
}

// Every case of the run, without modules yet: the modules hold only the variants the cases run
// (module_plans), so they are built after planning (attach_modules).
std::vector<WorkItem> plan(const std::vector<ir::Kernel>& kernels, const VerifyOptions& o) {
  std::vector<WorkItem> items;
  size_t index = 0;
  for (size_t k = 0; k < kernels.size(); ++k) {
    for (const auto& v : kernels[k].variants) {
      if (!kernels[k].selects(o.variants, v)) continue;
      for (const auto& t : kernels[k].tests.cases) {
        if (!o.case_filter.empty() && t.name != o.case_filter) continue;
        if (t.benchmark && t.name != o.case_filter) continue;  // run only when --case names it
        // By default each case runs on the variant a caller naming no tuning gets (the glue's
        // tuning_serving): the default, or the one that serves the case's dims.
        const ir::Variant& run = kernels[k].variant_to_run(o.variants, v, t.dims);
        for (auto& constants : kernels[k].constant_settings(t)) {
          if (index++ % static_cast<size_t>(o.shard_count) != static_cast<size_t>(o.shard_index - 1)) continue;
          items.push_back(
              {&kernels[k], &run, &t, nullptr, {}, std::move(constants), skip_reason(kernels[k], run, t), k});
        }
      }
    }
  }
  return items;
}

// Which kernels need a module, and which entry points each must hold: those of its cases that
// run, and for a family's members those its dispatches pick (as FamilyRun does). Where a case's
// dims make a dispatch unresolvable, the member keeps every variant (an empty set): the case then
// reports why when it runs.
struct ModulePlan {
  bool needed = false;
  bool every_variant = false;
  std::set<std::string> entry_points;

  void add(const std::string& entry_point) {
    needed = true;
    entry_points.insert(entry_point);
  }
};

void plan_family_members(const std::vector<ir::Kernel>& kernels, const WorkItem& w, std::vector<ModulePlan>& plans) {
  const ir::Family& f = *w.kernel->family;
  for (const auto& d : f.dispatches) {
    ModulePlan& member = plans[kernel_index_of(kernels, f.kernel_of(d).name)];
    try {
      member.add(f.member_variant(d, f.member_dims(d, w.test->dims, *w.variant), *w.variant).entry_point);
    } catch (const expr::EvalError&) {
      member.needed = member.every_variant = true;
    }
  }
}

std::vector<ModulePlan> module_plans(const std::vector<ir::Kernel>& kernels, const std::vector<WorkItem>& items) {
  std::vector<ModulePlan> plans(kernels.size());
  for (const auto& w : items) {
    if (!w.skip_reason.empty()) continue;
    plans[w.kernel_index].add(w.variant->entry_point);
    if (w.kernel->is_family()) plan_family_members(kernels, w, plans);
  }
  for (auto& p : plans) {
    if (p.every_variant) p.entry_points.clear();
  }
  return plans;
}

void attach_modules(std::vector<WorkItem>& items, const std::vector<ir::Kernel>& kernels,
                    const std::vector<std::unique_ptr<SimModule>>& modules) {
  for (auto& w : items) {
    if (!w.skip_reason.empty()) continue;
    w.module = modules[w.kernel_index].get();
    w.member_modules = member_modules(kernels, modules, *w.kernel);
  }
}

std::string stats_text(const CaseResult& r) {
  std::string text;
  for (const auto& s : r.outputs) {
    text += fmt::format("  {}: max|d| {:.2g} rel {:.2g} nmse {:.2g}", s.buffer, s.max_abs, s.max_rel, s.nmse);
    if (s.nonfinite_mismatches) text += fmt::format(" +{} NaN/inf mismatches", s.nonfinite_mismatches);
  }
  return text;
}

// " (spec.yaml:L)" for a line of the emitted .metal inside a spec block; the file's own line for a
// hand-written kernel.
std::string spec_line_of(int line, const void* kernel) {
  const auto& k = *static_cast<const ir::Kernel*>(kernel);
  if (k.is_family()) return "";  // no code of its own: the faulting module names the kernel
  return spec_line_note(k, k.is_source() ? std::string() : emit::msl_source(k), line);
}

// The kernel whose code `message` names (its module's path): a family's case runs its kernels'.
const ir::Kernel& kernel_named_by(const WorkItem& w, const std::string& message) {
  for (size_t i = 0; i < w.member_modules.size(); ++i) {
    if (message.find(w.member_modules[i]->path().string()) != std::string::npos) return w.kernel->family->kernels[i];
  }
  return *w.kernel;
}

// A crash report carries the faulting instruction (from the child), a poison use the comparison or
// conversion; here each becomes a source line.
void locate_pcs(CaseResult& r, const WorkItem& w) {
  for (auto& p : r.problems) p.message = resolve_fault_pc(p.message, spec_line_of, &kernel_named_by(w, p.message));
}

void print_case(std::ostream& out, size_t done, size_t total, const Finished& f, bool quiet) {
  bool ok = f.result.status == CaseStatus::pass || f.result.status == CaseStatus::skipped;
  if (quiet && ok && f.result.warnings.empty()) return;
  int width = static_cast<int>(std::to_string(total).size());
  if (f.result.status == CaseStatus::skipped) {
    fmt::print(out, "[{:>{}}/{}] {:<5} {} {}: skipped: {}\n", done, width, total, to_string(f.result.status),
               f.item.variant->entry_point, f.item.test->name, f.item.skip_reason);
    return;
  }
  std::string constants = f.item.kernel->describe(f.item.constants);
  fmt::print(out, "[{:>{}}/{}] {:<5} {} {}{}{} ({})\n", done, width, total, to_string(f.result.status),
             f.item.variant->entry_point, f.item.test->name, constants.empty() ? "" : " [" + constants + "]",
             stats_text(f.result), f.from_cache ? "result cache" : fmt::format("{:.2f} s", f.result.sim_seconds));
  if (!f.result.coverage.empty()) fmt::print(out, "    partial (--quick): {}\n", f.result.coverage);
  for (const auto& p : f.result.problems) {
    fmt::print(out, "    {}:{}: [{}] {}\n", f.item.kernel->spec_path, f.item.test->loc.line, p.checker, p.message);
  }
  for (const auto& p : f.result.warnings) {
    fmt::print(out, "    {}:{}: warning: [{}] {}\n", f.item.kernel->spec_path, f.item.test->loc.line, p.checker,
               p.message);
  }
}

// How far a run is: on a terminal one line redrawn in place under the case lines (cases done,
// failures so far, time left); elsewhere (CI logs) a plain line at most every 30 s.
class Progress {
 public:
  Progress(std::ostream& out, size_t total, bool live) : out_(out), total_(total), live_(live), start_(monotonic_seconds()) {}

  // Call before printing anything else: clears the live line.
  void clear() {
    if (live_ && shown_) fmt::print(out_, "\r\033[K");
    shown_ = false;
  }

  // After each finished case (`latest`); `done` cases have finished so far.
  void update(const Finished& latest, size_t done) {
    failed_ += latest.result.status != CaseStatus::pass && latest.result.status != CaseStatus::skipped;
    ran_ += !latest.from_cache && latest.result.status != CaseStatus::skipped;
    double now = monotonic_seconds();
    if (!live_ && now - last_ < 30 && done < total_) return;
    last_ = now;
    std::string left =
        ran_ ? fmt::format(", about {} left", duration((now - start_) / double(ran_) * double(total_ - done))) : "";
    fmt::print(out_, "{}verify: {}/{} cases, {} failed{}{}", live_ ? "\r\033[K" : "", done, total_, failed_,
               done < total_ ? left : "", live_ ? "" : "\n");
    out_.flush();
    shown_ = live_;
  }

 private:
  static std::string duration(double seconds) {
    int s = static_cast<int>(seconds + 0.5);
    return s >= 60 ? fmt::format("{} min {:02} s", s / 60, s % 60) : fmt::format("{} s", s);
  }

  std::ostream& out_;
  size_t total_;
  bool live_;
  double start_, last_ = 0;
  size_t failed_ = 0, ran_ = 0;  // of the cases finished so far: failures, and cases that ran
  bool shown_ = false;
};

// Runs of a failed case on other builds of its kernel that say more about the failure:
// * private_memory: the kernel compiled with its uninitialised private variables zeroed instead
//   of filled with 0xFE bytes. Other outputs mean the kernel reads private memory it never wrote.
// * exact_lines: a lane-order `race` says which output depends on the order, not which lines race;
//   a mismatch which elements are wrong, not what wrote them; a changed canary that something
//   wrote into a buffer's alignment slack (where no guard page is), not what: the case runs again
//   with the exact race detector, whose last-writer shadow covers the outputs and their slack, and
//   the racing lines and the lines (and threads) that last wrote those elements are attached.
// Each build is compiled on first need (and cached like any module).
class FollowUps {
 public:
  enum class Stage { none, private_memory, exact_lines };

  // `plans`: indexed as the kernels of the run; a follow-up build holds the first run's variants.
  FollowUps(const VerifyOptions& o, const std::vector<ModulePlan>& plans) : o_(o), plans_(plans) {}

  // What the case needs after `done`, given its result so far.
  Stage next(const CaseResult& r, Stage done) const {
    if (done == Stage::none && r.status == CaseStatus::fail && !r.output_digest.empty()) return Stage::private_memory;
    bool locatable = std::any_of(r.problems.begin(), r.problems.end(), [](const Problem& p) {
      return p.checker == "race" || p.checker == "mismatch" || p.checker == "out-of-bounds-write";
    });
    if (done < Stage::exact_lines && locatable && !o_.exact_races) return Stage::exact_lines;
    return Stage::none;
  }

  // The run of `w` for `stage`; nullopt where its module does not compile.
  std::optional<RunningCase> start(const WorkItem& w, Stage stage) {
    const bool exact = stage == Stage::exact_lines || o_.exact_races;
    auto& module = modules_[{w.kernel, stage}];
    if (!module) {
      ModuleOptions options = o_.module;
      options.entry_points = plans_[w.kernel_index].entry_points;
      options.race_instrumented = exact;
      if (stage == Stage::private_memory) options.private_init = ModuleOptions::PrivateInit::zero;
      try {
        module = std::make_unique<SimModule>(*w.kernel, options);
      } catch (const std::exception&) {
        return std::nullopt;  // the first run's report stands alone
      }
    }
    CaseRequest request{w.kernel, w.variant, w.test, module.get(), o_.seed, o_.workers, exact, w.constants};
    request.report_same_value_stores = o_.report_same_value_stores;
    request.exec = o_.exec;
    request.quick_threadgroups = o_.quick_threadgroups;
    return start_case(request, o_.timeout_seconds);
  }

  static void merge(CaseResult& r, const CaseResult& rerun, Stage stage, const WorkItem& w) {
    if (stage == Stage::private_memory) {
      if (!rerun.output_digest.empty() && rerun.output_digest != r.output_digest) {
        r.problems.insert(r.problems.begin(), {"uninitialised-private-memory", private_memory_message(w)});
      }
    } else if (stage == Stage::exact_lines) {
      attach_race_lines(r, rerun);
      take_located(r, rerun, "mismatch", " differs from the reference");
      take_located(r, rerun, "out-of-bounds-write", " (a canary");
    }
  }

 private:
  static std::string private_memory_message(const WorkItem& w) {
    return fmt::format("{}: the outputs depend on private (thread) memory read before it was written: built with "
                       "its uninitialised private variables zeroed instead of filled with 0xFE bytes, the kernel "
                       "computed other outputs. A thread reads a local variable or a private array element it never "
                       "wrote (a GPU leaves whatever its registers held there): initialise it (`float v[8] = {{}};`) "
                       "or read only the elements written.",
                       w.variant->entry_point);
  }

  // The exact run's `checker` reports that name what last wrote their elements ("last written at
  // line 30 ...", "never written") replace the first run's report that opens with the same text up
  // to `head_end` (the same output or element: the runs compute the same).
  static void take_located(CaseResult& r, const CaseResult& exact, const std::string& checker,
                           const std::string& head_end) {
    for (const auto& located : exact.problems) {
      const size_t end = located.message.find(head_end);
      if (located.checker != checker || end == std::string::npos || located.message.find(" written") == std::string::npos) {
        continue;
      }
      const std::string head = located.message.substr(0, end + head_end.size());
      for (auto& p : r.problems) {
        if (p.checker == checker && p.message.rfind(head, 0) == 0) p.message = located.message;
      }
    }
  }

  // Attaches the exact run's racing lines to each `race` problem, and its data_race reports.
  static void attach_race_lines(CaseResult& r, const CaseResult& exact) {
    std::vector<std::string> pairs;
    std::vector<Problem> races;
    for (const auto& p : exact.problems) {
      if (p.checker != "data_race") continue;
      races.push_back(p);
      if (std::string pair = racing_accesses(p.message); !pair.empty()) pairs.push_back(pair);
    }
    std::string note = pairs.empty()
                           ? " The exact race detector, run again on this case, saw no two unordered accesses to one "
                             "element (an order-dependent result of atomics, or control flow that depends on the order?)."
                           : fmt::format(" Racing accesses (the exact race detector, run again on this case): {}; see "
                                         "the data_race report{} for the fix.",
                                         fmt::join(pairs, "; "), races.size() > 1 ? "s" : "");
    for (auto& p : r.problems)
      if (p.checker == "race") p.message += note;
    r.problems.insert(r.problems.end(), races.begin(), races.end());
  }

  // "read at line 26 (x.yaml:26) and write at line 31 (x.yaml:31) on threadgroup array `partials`"
  // from a data_race message (race_report.cpp's describe()).
  static std::string racing_accesses(const std::string& message) {
    static const std::regex access("((?:atomic )?(?:read|write)) at (.*?) by thread");
    static const std::regex memory(" of ((?:threadgroup array|threadgroup variable|buffer) `[^`]*`)");
    std::vector<std::string> found;
    for (auto it = std::sregex_iterator(message.begin(), message.end(), access);
         it != std::sregex_iterator() && found.size() < 2; ++it) {
      found.push_back((*it)[1].str() + " at " + (*it)[2].str());
    }
    if (found.size() < 2) return "";
    std::smatch m;
    std::string on = std::regex_search(message, m, memory) ? " on " + m[1].str() : "";
    return found[0] + " and " + found[1] + on;
  }

  const VerifyOptions& o_;
  const std::vector<ModulePlan>& plans_;
  std::map<std::pair<const ir::Kernel*, Stage>, std::unique_ptr<SimModule>> modules_;
};

struct Active {
  size_t item;
  RunningCase running;
  FollowUps::Stage stage = FollowUps::Stage::none;  // which run this is
  std::optional<CaseResult> first;                  // for a follow-up: the result it adds to
};

// Everything a case's result depends on (ResultCache::key).
CaseIdentity identity(const WorkItem& w, const VerifyOptions& o) {
  CaseIdentity id{w.kernel, w.variant, w.test, {w.module->path()}, w.kernel->describe(w.constants), ""};
  for (const auto* m : w.member_modules) id.modules.push_back(m->path());
  id.options = fmt::format("seed {} races {} same-value {} timeout {} quick {} exec {}", o.seed, o.exact_races,
                           o.report_same_value_stores, o.timeout_seconds, o.quick_threadgroups,
                           o.exec == mtlsim::ExecPath::fibers ? "fibers" : "loops");
  return id;
}

std::vector<Finished> run_all(const std::vector<WorkItem>& items, const std::vector<ModulePlan>& plans,
                              const VerifyOptions& o, std::ostream& out) {
  const int jobs = support::job_count(o.jobs);
  std::vector<Finished> finished;
  std::deque<size_t> pending;
  for (size_t i = 0; i < items.size(); ++i) pending.push_back(i);
  std::vector<Active> running;
  FollowUps follow_ups(o, plans);
  Progress progress(out, items.size(), o.progress_line);
  auto report = [&](const std::vector<Finished>& done) {
    progress.clear();
    print_case(out, done.size(), items.size(), done.back(), o.quiet);
    if (o.progress_line || o.quiet) progress.update(done.back(), done.size());
  };
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].skip_reason.empty()) continue;
    finished.push_back({items[i], skipped(items[i].skip_reason)});
    report(finished);
  }
  std::erase_if(pending, [&](size_t i) { return !items[i].skip_reason.empty(); });
  ResultCache cache(o.result_cache ? cache_dir(o.module) : std::filesystem::path());
  std::vector<std::string> keys(items.size());
  std::erase_if(pending, [&](size_t i) {
    if (!cache.enabled()) return false;
    keys[i] = cache.key(identity(items[i], o));
    auto kept = cache.find(keys[i]);
    if (!kept) return false;
    finished.push_back({items[i], std::move(*kept), true});
    report(finished);
    return true;
  });
  while (!pending.empty() || !running.empty()) {
    while (!pending.empty() && static_cast<int>(running.size()) < jobs) {
      const WorkItem& w = items[pending.front()];
      CaseRequest request{w.kernel, w.variant, w.test, w.module, o.seed, o.workers, o.exact_races, w.constants};
      request.report_same_value_stores = o.report_same_value_stores;
      request.exec = o.exec;
      request.quick_threadgroups = o.quick_threadgroups;
      request.member_modules = w.member_modules;
      running.push_back({pending.front(), start_case(request, o.timeout_seconds), FollowUps::Stage::none, std::nullopt});
      pending.pop_front();
    }
    bool progressed = false;
    for (size_t i = 0; i < running.size();) {
      CaseResult result;
      if (!poll_case(running[i].running, result, o.timeout_seconds)) {
        ++i;
        continue;
      }
      const WorkItem& w = items[running[i].item];
      locate_pcs(result, w);
      progressed = true;
      Active& a = running[i];
      if (a.first) {  // a follow-up: what it found goes to the first run's result
        FollowUps::merge(*a.first, result, a.stage, w);
        result = std::move(*a.first);
      }
      bool followed = false;  // a build that does not compile is passed over
      // A family's case is not rerun: each of its kernels has cases of its own, which say more.
      auto first_next = w.kernel->is_family() ? FollowUps::Stage::none : follow_ups.next(result, a.stage);
      for (auto next = first_next; next != FollowUps::Stage::none && !followed;
           next = follow_ups.next(result, next)) {
        if (auto rerun = follow_ups.start(w, next)) {
          a = {a.item, std::move(*rerun), next, std::move(result)};
          followed = true;
        }
      }
      if (followed) continue;
      if (a.stage == FollowUps::Stage::none) cache.keep(keys[a.item], result);
      finished.push_back({w, std::move(result)});
      report(finished);
      running.erase(running.begin() + static_cast<long>(i));
    }
    if (!progressed) ::usleep(2000);
  }
  progress.clear();
  return finished;
}

struct Tally {
  std::set<std::string> variants, cases;
  int passed = 0, failed = 0, skipped = 0;
};

Tally tally(const ir::Kernel& k, const std::vector<Finished>& finished) {
  Tally t;
  for (const auto& f : finished) {
    if (f.item.kernel != &k) continue;
    t.variants.insert(f.item.variant->entry_point);
    t.cases.insert(f.item.test->name);
    CaseStatus s = f.result.status;
    (s == CaseStatus::pass ? t.passed : s == CaseStatus::skipped ? t.skipped : t.failed)++;
  }
  return t;
}

void print_summary(std::ostream& out, const std::vector<ir::Kernel>& kernels, const std::vector<Finished>& finished) {
  size_t width = 16;  // the kernel column fits the longest name, so the numbers line up
  for (const auto& k : kernels) width = std::max(width, k.name.size());
  fmt::print(out, "\n{:<{}} {:>9} {:>6} {:>7} {:>7} {:>8}\n", "kernel", width, "variants", "cases", "passed", "failed",
             "skipped");
  for (const auto& k : kernels) {
    Tally t = tally(k, finished);
    fmt::print(out, "{:<{}} {:>9} {:>6} {:>7} {:>7} {:>8}\n", k.name, width, t.variants.size(), t.cases.size(), t.passed,
               t.failed, t.skipped);
  }
}

// A case every chosen variant skipped verified nothing: say so (under --variant default, the
// default tuning may not admit a case that other tunings run).
void warn_unrun_cases(std::ostream& err, const std::vector<Finished>& finished, ir::VariantSelection selection) {
  std::map<std::pair<const ir::Kernel*, const ir::TestCase*>, const Finished*> unrun;
  std::set<std::pair<const ir::Kernel*, const ir::TestCase*>> ran;
  for (const auto& f : finished) {
    auto key = std::make_pair(f.item.kernel, f.item.test);
    if (f.result.status != CaseStatus::skipped) ran.insert(key);
    else unrun.emplace(key, &f);
  }
  for (const auto& [key, f] : unrun) {
    if (ran.count(key)) continue;
    fmt::print(err, "{}:{}: warning: test case `{}` ran on no variant (skipped: {}){}\n", key.first->spec_path,
               key.second->loc.line, key.second->name, f->item.skip_reason,
               selection == ir::VariantSelection::all ? "" : "; `--variant all` runs it on the tunings that admit it");
  }
}

// The function constants a case ran with, by name, as JSON booleans, integers or numbers.
nlohmann::json constants_json(const ir::Kernel& k, const ir::ConstantSetting& setting) {
  nlohmann::json j = nlohmann::json::object();
  for (size_t i = 0; i < k.function_constants.size() && i < setting.size(); ++i) {
    const auto& f = k.function_constants[i];
    if (f.type == ir::ScalarType::boolean) {
      j[f.name] = setting[i] != 0;
    } else if (ir::info(f.type).is_float) {
      j[f.name] = setting[i];
    } else {
      j[f.name] = static_cast<int64_t>(setting[i]);
    }
  }
  return j;
}

void write_json(const std::string& path, const std::vector<Finished>& finished) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& f : finished) {
    nlohmann::json c = to_json(f.result);
    c["kernel"] = f.item.kernel->name;
    c["entry_point"] = f.item.variant->entry_point;
    c["case"] = f.item.test->name;
    c["constants"] = constants_json(*f.item.kernel, f.item.constants);
    if (!f.item.skip_reason.empty()) c["skip_reason"] = f.item.skip_reason;
    j.push_back(std::move(c));
  }
  support::write_file_atomically(path, j.dump(2) + "\n");
}

// Builds the modules `plans` asks for, `o.jobs` compiles at a time (a cold cache spends nearly all
// its time in g++), reporting each in kernel order as soon as it and those before it are done. On a
// failure no further compile starts and the first failing kernel's error is reported, as a
// one-at-a-time build would.
int build_modules(const std::vector<ir::Kernel>& kernels, const std::vector<ModulePlan>& plans, const VerifyOptions& o,
                  std::vector<std::unique_ptr<SimModule>>& modules, std::ostream& out, std::ostream& err) {
  struct Built {
    bool done = false;
    double seconds = 0;
    std::string error;
    int status = support::kOk;
  };
  std::vector<Built> built(kernels.size());
  std::mutex mutex;
  size_t reported = 0;  // modules before this one are reported
  int status = support::kOk;
  auto report_done = [&] {  // under the lock
    for (; reported < kernels.size() && built[reported].done && status == support::kOk; ++reported) {
      const Built& b = built[reported];
      if (b.status != support::kOk) {
        fmt::print(err, "{}", b.error);
        status = b.status;
      } else if (!o.quiet && modules[reported]) {
        fmt::print(out, "{}: simulator module{} {} ({:.1f} s)\n", kernels[reported].name,
                   o.exact_races ? " (race-instrumented)" : "",
                   modules[reported]->was_cached() ? "cached" : "compiled", b.seconds);
      }
    }
  };
  support::parallel_for(kernels.size(), o.jobs, [&](size_t i) {
    Built b;
    b.done = true;
    if (plans[i].needed) {
      ModuleOptions options = o.module;
      options.race_instrumented = o.exact_races;
      options.entry_points = plans[i].entry_points;
      const double start = monotonic_seconds();
      try {
        modules[i] = std::make_unique<SimModule>(kernels[i], options);
      } catch (const RefusedSpecCode& e) {
        b = {true, 0, fmt::format("{}\n", e.what()), support::kSpecErrors};
      } catch (const std::exception& e) {
        b = {true, 0, fmt::format("{}: error: {}\n", kernels[i].spec_path, e.what()), support::kVerifyFailed};
      }
      b.seconds = monotonic_seconds() - start;
    }
    std::lock_guard lock(mutex);
    built[i] = b;
    report_done();
    return b.status == support::kOk;
  });
  return status;
}

}  // namespace

int run_verify(const VerifyOptions& o, std::ostream& out, std::ostream& err) {
  support::Diagnostics diags;
  // Bodies that passed libclang before are not parsed again: a verdict depends only on the code and
  // the tool, so it is kept beside the modules even where --no-result-cache runs every case.
  const check_msl::PassedChecks passed{cache_dir(o.module), support::sources_identity()};
  auto kernels = check_msl::load_library(o.inputs, diags, o.include_dirs, passed);
  fmt::print(err, "{}", diags.format_all());
  if (diags.has_errors()) return support::kSpecErrors;
  if (!o.gpu.empty()) return o.gpu_backend->verify(kernels, o, out, err);
  auto items = plan(kernels, o);
  const std::vector<ModulePlan> plans = module_plans(kernels, items);
  std::vector<std::unique_ptr<SimModule>> modules(kernels.size());
  if (int status = build_modules(kernels, plans, o, modules, out, err); status != support::kOk) return status;
  attach_modules(items, kernels, modules);
  auto finished = run_all(items, plans, o, out);
  print_summary(out, kernels, finished);
  if (!o.json_path.empty()) write_json(o.json_path, finished);
  // A shard sees a slice of the variants: a case skipped here may run in another shard.
  if (o.shard_count <= 1) warn_unrun_cases(err, finished, o.variants);
  auto count = [&](auto pred) { return std::count_if(finished.begin(), finished.end(), pred); };
  size_t skipped = count([](const Finished& f) { return f.result.status == CaseStatus::skipped; });
  size_t failed = count([](const Finished& f) {
    return f.result.status != CaseStatus::pass && f.result.status != CaseStatus::skipped;
  });
  size_t cached = count([](const Finished& f) { return f.from_cache; });
  size_t partial = count([](const Finished& f) { return !f.result.coverage.empty(); });
  if (partial) {
    fmt::print(out, "{} case{} ran a sample of their threadgroups (--quick {}): partial coverage\n", partial,
               partial == 1 ? "" : "s", o.quick_threadgroups);
  }
  fmt::print(out, "{} passed{}, {} failed, {} skipped\n", finished.size() - failed - skipped,
             cached ? fmt::format(" ({} from the result cache)", cached) : "", failed, skipped);
  return failed ? support::kVerifyFailed : support::kOk;
}

}  // namespace mtlgen::verify
