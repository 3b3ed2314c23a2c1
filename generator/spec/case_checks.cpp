#include "spec/case_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace mtlgen::spec {

using support::Diagnostics;
using support::ErrorKind;

namespace {

using Dims = std::map<std::string, int64_t>;

class CaseChecker {
 public:
  CaseChecker(const ir::Kernel& k, Diagnostics& d) : k_(k), diags_(d) {}

  void run(const ir::TestCase& c, const Dims& dims) {
    if (k_.has_per_variant_preconditions()) check_case_runs_somewhere(c, dims);
    check_case_sizes(c, dims);
    if (k_.is_family()) check_family_case(c, dims);
  }

 private:
  void check_case_runs_somewhere(const ir::TestCase& c, const Dims& dims);
  void check_case_sizes(const ir::TestCase& c, const Dims& dims);
  void check_family_case(const ir::TestCase& c, const Dims& dims);
  std::optional<std::pair<expr::Expr, std::string>> threads_problem(const ir::Variant& v, const expr::Env& env);
  static std::optional<std::pair<expr::Expr, std::string>> byte_size_problem(const std::vector<expr::Expr>& axes,
                                                                             int64_t element_size, const expr::Env& env);

  const ir::Kernel& k_;
  Diagnostics& diags_;
};

// Each dispatch's dims, computed from the case's, are valid for its kernel.
void CaseChecker::check_family_case(const ir::TestCase& c, const Dims& dims) {
  for (const auto& d : k_.family->dispatches) {
    const ir::Kernel& m = k_.family->kernel_of(d);
    try {
      auto member_dims = k_.family->member_dims(d, dims, k_.variants.front());
      std::string problem = m.dims_violation(member_dims);
      if (problem.empty()) continue;
      diags_.error(ErrorKind::test_case, c.loc, fmt::format("test case `{}`: dispatch of `{}`: {}", c.name, m.name, problem),
                   "fix the dims, or the dispatch's `dims:` that computes them");
    } catch (const expr::EvalError& e) {
      diags_.error(ErrorKind::test_case, c.loc, fmt::format("test case `{}`: dispatch of `{}`: {}", c.name, m.name, e.message),
                   "fix the dims, or the dispatch's `dims:` that computes them");
    }
  }
}

// Every variant that runs the case must be able to size its buffers and grid and count its cost:
// a shape that divides by zero, or whose byte size overflows (and would wrap to a small
// allocation), is a spec error here rather than a crash or a silent wrap in generated code.
void CaseChecker::check_case_sizes(const ir::TestCase& c, const Dims& dims) {
  for (const auto& v : k_.variants) {
    try {
      if (!k_.variant_violation(dims, v).empty()) continue;  // skipped there
    } catch (const expr::EvalError&) {
      continue;  // check_case_runs_somewhere reported it
    }
    const expr::Env env = ir::Kernel::env_for(dims, v);
    auto fail = [&](const expr::Expr& e, const std::string& what) {
      diags_.error(ErrorKind::test_case, e.loc,
                   fmt::format("test case `{}`: {} at {}", c.name, what, k_.describe_tuning(v)),
                   "every size must be computable in 64 bits for every test case: fix the expression or the dims");
    };
    for (const auto& b : k_.buffers) {
      if (auto problem = byte_size_problem(b.shape, ir::info(b.type.resolve(v.types)).size, env)) {
        return fail(problem->first, fmt::format("buffer `{}`: {}", b.name, problem->second));
      }
    }
    for (const auto* list : {&k_.dispatch.threadgroups}) {
      if (auto problem = byte_size_problem(*list, 1, env)) return fail(problem->first, "threadgroups: " + problem->second);
    }
    if (k_.dispatch.threads_from_dims) {
      if (auto problem = threads_problem(v, env)) {
        diags_.error(ErrorKind::test_case, problem->first.loc,
                     fmt::format("test case `{}`: {} at {}", c.name, problem->second, k_.describe_tuning(v)),
                     "the size each problem gets must lie in 1 .. max_threads_per_threadgroup: fix the expression, "
                     "raise the maximum, or exclude these dims with a precondition");
        return;
      }
    }
    for (const auto* cost : k_.cost.formulas()) {
      try {
        expr::evaluate(*cost, env);
      } catch (const expr::EvalError& e) {
        return fail(*cost, "cost: " + e.message);
      }
    }
  }
}

// Why a threadgroup size computed from a case's dims cannot run at `v`: an axis below 1 or a
// total above the declared maximum.
std::optional<std::pair<expr::Expr, std::string>> CaseChecker::threads_problem(const ir::Variant& v, const expr::Env& env) {
  int64_t total = 1;
  for (const auto& e : k_.dispatch.threads_per_threadgroup) {
    int64_t n = 0;
    try {
      n = expr::evaluate(e, env);
    } catch (const expr::EvalError& err) {
      return std::pair{e, "threads_per_threadgroup: " + err.message};
    }
    if (n < 1) return std::pair{e, fmt::format("threads_per_threadgroup: `{}` is {}", expr::to_source(e), n)};
    total = std::min<int64_t>(total * n, INT64_MAX / 2048);
  }
  if (total > v.threads_per_threadgroup) {
    return std::pair{k_.dispatch.threads_per_threadgroup[0],
                     fmt::format("{} threads per threadgroup, above max_threads_per_threadgroup {}", total,
                                 v.threads_per_threadgroup)};
  }
  return std::nullopt;
}

// Why the product of `axes` times `element_size` cannot be computed (the axis at fault and the
// reason), or nullopt when it can.
std::optional<std::pair<expr::Expr, std::string>> CaseChecker::byte_size_problem(const std::vector<expr::Expr>& axes,
                                                                                int64_t element_size,
                                                                                const expr::Env& env) {
  int64_t total = element_size;
  for (const auto& e : axes) {
    int64_t n = 0;
    try {
      n = expr::evaluate(e, env);
    } catch (const expr::EvalError& err) {
      return std::pair{e, err.message};
    }
    if (n < 0) return std::pair{e, fmt::format("`{}` is {}", expr::to_source(e), n)};
    if (__builtin_mul_overflow(total, n, &total)) {
      return std::pair{e, fmt::format("the size overflows 64 bits at `{}` = {}", expr::to_source(e), n)};
    }
  }
  return std::nullopt;
}

// A case that violates a per-variant precondition is skipped on that variant; one that no variant
// can run verifies nothing, so it is a spec error.
void CaseChecker::check_case_runs_somewhere(const ir::TestCase& c, const Dims& dims) {
  std::string violated;
  bool runs = false;
  for (const auto& v : k_.variants) {  // all of them: verify evaluates the checks at every variant
    try {
      std::string message = k_.variant_violation(dims, v);
      runs = runs || message.empty();
      if (violated.empty()) violated = message;
    } catch (const expr::EvalError& e) {
      diags_.error(ErrorKind::test_case, c.loc,
                   fmt::format("test case `{}`: {} at {}", c.name, e.message, k_.describe_tuning(v)), "fix the dims");
      return;
    }
  }
  if (runs) return;
  diags_.error(ErrorKind::test_case, c.loc,
               fmt::format("test case `{}`: no variant can run it: violates precondition: {}", c.name, violated),
               "every variant would skip it; fix the dims or widen the tune space");
}

}  // namespace

void check_case_at_variants(const ir::Kernel& kernel, const ir::TestCase& c, const Dims& dims, Diagnostics& diags) {
  CaseChecker(kernel, diags).run(c, dims);
}

}  // namespace mtlgen::spec
