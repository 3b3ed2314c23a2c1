#include "verify/family_runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "emit_msl/msl_emitter.h"
#include "verify/compare.h"
#include "verify/dispatch_setup.h"
#include "verify/elements.h"
#include "verify/guarded_buffer.h"
#include "verify/host_buffer.h"
#include "verify/inputs.h"
#include "verify/run_checks.h"

namespace mtlgen::verify {

namespace {

// One dispatch, resolved for the case: the member kernel's variant, dims, parameters and which
// family buffer each of its buffers is.
struct PlannedDispatch {
  const ir::Kernel* kernel = nullptr;
  const ir::Variant* variant = nullptr;
  const LoadedModule* module = nullptr;
  std::map<std::string, int64_t> dims;
  std::vector<uint8_t> params;
  mtlsim::HostDispatch host;   // the glue's dispatch of this kernel (describe_host_dispatch)
  std::vector<size_t> buffers;  // family buffer index per member buffer
  std::string msl;              // the member's .metal, whose lines the simulator reports
};

class FamilyRun {
 public:
  FamilyRun(const CaseRequest& r, const LoadedModule& family, const std::vector<std::unique_ptr<LoadedModule>>& members)
      : r_(r), family_(family), members_(members), k_(*r.kernel), f_(*k_.family), v_(*r.variant), t_(*r.test) {}

  CaseResult run() {
    env_ = ir::Kernel::env_for(t_.dims, v_);
    make_buffers();
    if (!plan_dispatches()) return finish();
    for (const auto& run : kRuns) {
      if (!simulate(run)) break;
    }
    if (!simulator_failed_) check_runs();
    if (result_.status != CaseStatus::error && !simulator_failed_) compare_with_reference();
    return finish();
  }

 private:
  CaseResult finish() {
    if (!result_.problems.empty() && result_.status == CaseStatus::pass) result_.status = CaseStatus::fail;
    return std::move(result_);
  }

  void make_buffers() { buffers_ = simulated_buffers(k_, v_, t_, env_); }

  size_t buffer_index(const std::string& name) const {
    for (size_t i = 0; i < buffers_.size(); ++i) {
      if (buffers_[i].decl->name == name) return i;
    }
    throw std::logic_error("a family dispatch binds an unknown buffer " + name);
  }

  double scalar_value(const std::string& name) const {
    if (auto it = t_.scalars.find(name); it != t_.scalars.end()) return it->second;
    for (const auto& s : k_.scalars) {
      if (s.name == name) return s.default_value;
    }
    return 0;
  }

  // Resolves every dispatch; false (with an `error` problem) when the case's dims make one invalid.
  bool plan_dispatches() {
    for (size_t i = 0; i < f_.dispatches.size(); ++i) {
      const ir::FamilyDispatch& d = f_.dispatches[i];
      PlannedDispatch p;
      p.kernel = &f_.kernel_of(d);
      p.module = members_[d.member].get();
      p.dims = f_.member_dims(d, t_.dims, v_);
      p.variant = &f_.member_variant(d, p.dims, v_);
      std::string where = fmt::format("dispatch {} (`{}`)", i + 1, p.kernel->name);
      std::string problem = p.kernel->dims_violation(p.dims);
      if (problem.empty()) problem = p.kernel->variant_violation(p.dims, *p.variant);
      if (!problem.empty()) return plan_error(fmt::format("{} gets dims it does not accept: {}", where, problem));
      std::string host_problem = describe_host_dispatch(*p.module, *p.kernel, *p.variant, p.dims, [&](const std::string& s) {
        return scalar_value(ir::Family::bound(d.scalars, s));
      }, p.host);
      if (!host_problem.empty()) return plan_error(fmt::format("{}: {}", where, host_problem));
      p.params = params_bytes(p.host);
      const expr::Env env = ir::Kernel::env_for(p.dims, *p.variant);
      for (const auto& mb : p.kernel->buffers) {
        size_t index = buffer_index(ir::Family::bound(d.buffers, mb.name));
        const int64_t needed = mb.elements(env);
        if (static_cast<size_t>(needed) > buffers_[index].elements) {
          return plan_error(fmt::format("{} sees the family's `{}` ({} elements) as its `{}` of {} elements: the "
                                        "family's shape is too small for the dims the dispatch computes",
                                        where, buffers_[index].decl->name, buffers_[index].elements, mb.name, needed));
        }
        p.buffers.push_back(index);
      }
      p.msl = emit::msl_source(*p.kernel);
      planned_.push_back(std::move(p));
    }
    return true;
  }

  bool plan_error(std::string message) {
    result_.status = CaseStatus::error;
    result_.problems.push_back({"error", k_.name + ": " + std::move(message)});
    return false;
  }

  // All dispatches in order, as one command buffer runs them (each sees the previous one's writes).
  bool simulate(const RunSpec& run) {
    for (auto& b : buffers_) {
      b.start_run(run.placement, run.output_poison);
    }
    bool baseline = &run == &kRuns[0];
    for (const auto& p : planned_) {
      if (!dispatch(p, run, baseline)) return false;
    }
    for (auto& b : buffers_) {
      if (!b.decl->is_host_output()) continue;
      auto* data = static_cast<const uint8_t*>(b.sim->data());
      b.snapshots.emplace_back(data, data + b.bytes());
    }
    return true;
  }

  bool dispatch(const PlannedDispatch& p, const RunSpec& run, bool baseline) {
    std::vector<void*> slots;
    for (size_t index : p.buffers) slots.push_back(buffers_[index].sim->data());
    slots.push_back(const_cast<uint8_t*>(p.params.data()));
    auto options = dispatch_options(*p.kernel, *p.variant, p.host, run, r_.order_seed, r_.workers);
    options.group_fn = p.module->group_fn(*p.variant);
    options.exec = r_.exec;
    auto fn = p.module->thread_fn(*p.variant);
    p.module->set_function_constants(*p.kernel, p.kernel->default_constants());
    remember_kernel_code(reinterpret_cast<const void*>(fn));
    double start = monotonic_seconds();
    auto result = mtlsim::dispatch(options, fn, slots.data());
    if (baseline) {
      result_.sim_seconds += monotonic_seconds() - start;
      result_.fiber_switches += result.fiber_switches;
      result_.threadgroups_as_loops += result.threadgroups_as_loops;
    }
    for (const auto& issue : result.issues) add_problem(mtlsim::to_string(issue.kind), with_spec_lines(p, issue.message));
    if (baseline) add_poison_uses(p, result);
    simulator_failed_ = !result.ok();
    return result.ok();
  }

  // Poison that decided a comparison or became an integer; the parent turns its pc into a line.
  void add_poison_uses(const PlannedDispatch& p, const mtlsim::DispatchResult& result) {
    for (const auto& use : result.poison_uses) {
      char where[1024] = "";
      describe_fault_pc(use.pc, where, sizeof where);
      add_problem(mtlsim::to_string(use.kind), mtlsim::describe(use, p.variant->entry_point, where));
    }
  }

  // "line 36" of a member's .metal becomes "line 36 (specs/x.yaml:120)" where a spec block holds it.
  static std::string with_spec_lines(const PlannedDispatch& p, const std::string& message) {
    return verify::with_spec_lines(*p.kernel, p.msl, message);
  }

  void add_problem(std::string checker, std::string message) {
    add_unique_problem(result_, std::move(checker), std::move(message));
  }

  static OutputRuns runs_of(const SimulatedBuffer& b) {
    return {b.decl->name, b.type, b.shape, b.elements, b.decl->access == ir::Access::write, &b.snapshots};
  }

  void check_runs() {
    for (const auto& b : buffers_) {
      if (!b.decl->is_host_output()) continue;
      check_unwritten(b);
      check_difference(b, 1, "race");
      check_difference(b, 2, "race");
      check_difference(b, 3, "uninitialised-threadgroup-memory");
    }
  }

  void check_unwritten(const SimulatedBuffer& b) {
    ElementFinding f = unwritten_elements(runs_of(b));
    if (f.count == 0) return;
    add_problem("unwritten-output",
                fmt::format("{}: {} of {} elements of the family's output `{}` were never written by any dispatch: "
                            "{}{}. Does a grid round down, a bounds check skip them, or a dispatch's `dims:` give its kernel "
                            "fewer elements than the family's buffer holds?",
                            v_.entry_point, f.count, b.elements, b.decl->name, fmt::join(f.examples, ", "),
                            f.count > f.examples.size() ? ", ..." : ""));
  }

  void check_difference(const SimulatedBuffer& b, size_t run, const char* checker) {
    ElementFinding f = run_difference(runs_of(b), run);
    if (f.count == 0) return;
    bool race = std::string(checker) == "race";
    add_problem(checker, fmt::format("{}: the family's output `{}` depends on {}: {} elements differ, e.g. {}. {}",
                                     v_.entry_point, b.decl->name,
                                     race ? "the order threads run in" : "uninitialised threadgroup memory", f.count,
                                     fmt::join(f.examples, "; "),
                                     race ? "Verify each kernel of the family on its own (its own spec section and "
                                            "tests) to find which one races."
                                          : "Some thread reads threadgroup memory before its threadgroup wrote it."));
  }

  // The reference sees the family's buffers except its intermediates, in declaration order.
  void compare_with_reference() {
    std::vector<std::vector<uint8_t>> ref;
    std::vector<size_t> index;
    std::vector<void*> slots;
    std::vector<uint64_t> elements;
    for (size_t i = 0; i < buffers_.size(); ++i) {
      const SimulatedBuffer& b = buffers_[i];
      if (b.decl->intermediate) continue;
      ref.push_back(b.initial.empty() ? std::vector<uint8_t>(b.bytes()) : b.initial);
      index.push_back(i);
      elements.push_back(b.elements);
    }
    for (auto& bytes : ref) slots.push_back(bytes.data());
    const std::vector<uint64_t> dims = dims_values(k_, t_.dims);
    const std::vector<double> scalars = scalar_values(k_, [&](const std::string& s) { return scalar_value(s); });
    char error[1024] = "";
    double start = monotonic_seconds();
    auto fn = family_.reference_fn(reference_symbol(k_, v_));
    std::vector<double> no_constants;
    int rc = fn(slots.data(), elements.data(), dims.data(), scalars.data(), no_constants.data(), error, sizeof error);
    error[sizeof error - 1] = '\0';
    if (rc != 0) {
      result_.status = CaseStatus::error;
      add_problem("error", fmt::format("the family's reference rejected this case: {}", error));
      return;
    }
    result_.reference_seconds = monotonic_seconds() - start;
    for (size_t j = 0; j < index.size(); ++j) {
      const SimulatedBuffer& b = buffers_[index[j]];
      if (!b.decl->is_host_output()) continue;
      auto tol = tolerance_for(k_, b.decl->name, b.type);
      auto stats = compare_output(b.decl->name, b.type, b.shape, b.snapshots[0].data(), ref[j].data(), b.elements, tol);
      if (stats.mismatches || stats.nmse_failed) {
        // Statistics of the finite pairs only; when every differing element is NaN or inf they say nothing.
        std::string numbers = stats.nonfinite_mismatches == stats.mismatches
                                  ? fmt::format("all {} with NaN or inf", stats.mismatches)
                                  : fmt::format("max abs {:.3g}, max rel {:.3g}, nmse {:.3g}", stats.max_abs,
                                                stats.max_rel, stats.nmse);
        add_problem("mismatch", fmt::format("{}: the family's output `{}` differs from the family's reference in {} of {} "
                                            "elements ({}): {}{}",
                                            v_.entry_point, b.decl->name, stats.mismatches, stats.elements, numbers,
                                            fmt::join(stats.examples, "; "),
                                            stats.mismatches > stats.examples.size() ? "; ..." : ""));
      }
      result_.outputs.push_back(std::move(stats));
    }
  }

  const CaseRequest& r_;
  const LoadedModule& family_;
  const std::vector<std::unique_ptr<LoadedModule>>& members_;
  const ir::Kernel& k_;
  const ir::Family& f_;
  const ir::Variant& v_;
  const ir::TestCase& t_;
  expr::Env env_;
  std::vector<SimulatedBuffer> buffers_;
  std::vector<PlannedDispatch> planned_;
  CaseResult result_;
  bool simulator_failed_ = false;
};

}  // namespace

CaseResult run_family_case(const CaseRequest& request, const LoadedModule& family,
                           const std::vector<std::unique_ptr<LoadedModule>>& members) {
  try {
    return FamilyRun(request, family, members).run();
  } catch (const std::exception& e) {
    CaseResult r;
    r.status = CaseStatus::error;
    r.problems.push_back({"error", e.what()});
    return r;
  }
}

}  // namespace mtlgen::verify
