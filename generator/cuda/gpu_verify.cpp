#include "cuda/gpu_verify.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <mutex>

#include "cuda/gpu_run.h"
#include "support/exit_code.h"
#include "verify/compare.h"

namespace mtlgen::cuda {

using verify::VerifyOptions;

namespace {

struct Outcome {
  bool passed = true;
  bool skipped = false;
  std::vector<std::string> problems;
};

std::string describe_case(const GpuCase& c) {
  std::string constants;
  if (!c.constants.empty()) constants = fmt::format(" constants [{}]", fmt::join(c.constants, ", "));
  return fmt::format("{} {}{}", c.variant->entry_point, c.test->name, constants);
}

void compare_outputs(const GpuCase& c, const std::vector<verify::HostBuffer>& buffers, const fs::path& dir, Outcome& o) {
  for (size_t i = 0; i < buffers.size(); ++i) {
    const verify::HostBuffer& b = buffers[i];
    if (!b.decl->is_host_output()) continue;
    std::string got = read_text(dir / fmt::format("gpu_{}.bin", i));
    std::string want = read_text(dir / fmt::format("ref_{}.bin", i));
    if (got.size() != b.bytes() || want.size() != b.bytes()) {
      o.problems.push_back(fmt::format("error: output `{}` did not come back whole from the runner", b.decl->name));
      continue;
    }
    auto tol = verify::tolerance_for(*c.kernel, b.decl->name, b.type);
    verify::OutputStats s = verify::compare_output(b.decl->name, b.type, b.shape, got.data(), want.data(), b.elements, tol);
    if (!s.mismatches && !s.nmse_failed) continue;
    o.problems.push_back(fmt::format("mismatch: {} of {} elements of `{}` differ from the reference (max abs {:g}): {}",
                                     s.mismatches, s.elements, b.decl->name, s.max_abs, fmt::join(s.examples, "; ")));
  }
}

Outcome run_gpu_case(const GpuCase& c, const GpuModule& m, const fs::path& dir, const VerifyOptions& opts) {
  Outcome o;
  std::string skip = c.kernel->variant_violation(c.test->dims, *c.variant);
  if (!skip.empty()) {
    o.skipped = true;
    o.problems.push_back("precondition: " + skip);
    return o;
  }
  std::vector<verify::HostBuffer> buffers;
  try {
    buffers = prepare_case(c, dir, "verify");
  } catch (const std::runtime_error& e) {
    o.problems.push_back(fmt::format("error: {}", e.what()));
    return o;
  }
  int status = 0;
  std::string output = verify::run_program({m.executable.string(), dir.string()}, dir, status, opts.timeout_seconds);
  auto result = read_result(dir);
  if (status == -1 && !result.count("ok")) {  // killed at the timeout: the sanitizers would hang too
    o.problems.push_back(fmt::format("hang: the kernel did not finish within {:g} s (--timeout); it was killed",
                                     opts.timeout_seconds));
    return o;
  }
  if (status != 0 || !result.count("ok")) {
    std::string why = result.count("error") ? result["error"] : fmt::format("exit status {}", status);
    o.problems.push_back(fmt::format("error: {}{}", why, output.empty() ? "" : "\n" + output.substr(0, 2000)));
  } else {
    compare_outputs(c, buffers, dir, o);
  }
  if (opts.sanitize) {
    for (auto& p : sanitizer_problems(*c.kernel, m.executable, dir, opts.timeout_seconds)) o.problems.push_back(std::move(p));
  }
  o.passed = o.problems.empty();
  return o;
}

// The variant x case x constants selection of the simulator path (verify.cpp's plan).
std::vector<GpuCase> plan_cases(const std::vector<ir::Kernel>& kernels, const VerifyOptions& o) {
  std::vector<GpuCase> cases;
  for (const auto& k : kernels) {
    for (const auto& v : k.variants) {
      if (!k.selects(o.variants, v)) continue;
      for (const auto& t : k.tests.cases) {
        if (!o.case_filter.empty() && t.name != o.case_filter) continue;
        if (t.benchmark && t.name != o.case_filter) continue;
        const ir::Variant& run = k.variant_to_run(o.variants, v, t.dims);
        for (auto& constants : k.constant_settings(t)) cases.push_back({&k, &run, &t, std::move(constants)});
      }
    }
  }
  return cases;
}

// The cases of `kernels` on the GPU, a few at a time; a line per case as the simulator path prints
// them, and the summary.
int verify_on_gpu(const std::vector<ir::Kernel>& kernels, const VerifyOptions& o, std::ostream& out) {
  auto nvcc = usable_nvcc("verify", out);
  if (!nvcc) return support::kOk;
  auto modules = build_modules(gpu_kernels(kernels), o.module, *nvcc, support::job_count(o.jobs), out);
  std::vector<GpuCase> cases = plan_cases(kernels, o);
  std::erase_if(cases, [&](const GpuCase& c) { return !modules.count(c.kernel->name); });
  std::vector<Outcome> outcomes(cases.size());
  std::mutex mutex;
  std::atomic<size_t> done{0};
  // The GPU runs one case at a time well; sanitizer runs are mostly host time, so jobs help there.
  const int jobs = o.sanitize ? support::job_count(o.jobs) : std::min(support::job_count(o.jobs), 8);
  support::parallel_for(cases.size(), jobs, [&](size_t i) {
    const GpuModule& m = modules.at(cases[i].kernel->name);
    Outcome r;
    if (!m.error.empty()) r.problems.push_back("error: its CUDA module did not compile (above)");
    else r = run_gpu_case(cases[i], m, case_dir(o.module, i), o);
    r.passed = r.problems.empty() || r.skipped;
    std::lock_guard lock(mutex);
    size_t n = ++done;
    if (!r.passed || !o.quiet)
      fmt::print(out, "[{}/{}] {} {}{}\n", n, cases.size(), r.skipped ? "SKIP" : r.passed ? "PASS" : "FAIL",
                 cases[i].kernel->name, " " + describe_case(cases[i]));
    for (const auto& p : r.problems) fmt::print(out, "    {}\n", p);
    out.flush();  // a run stopped from outside keeps what it printed
    outcomes[i] = std::move(r);
  });
  std::error_code ignored;
  fs::remove_all(case_dir(o.module, 0).parent_path(), ignored);
  size_t failed = std::count_if(outcomes.begin(), outcomes.end(), [](const Outcome& r) { return !r.passed; });
  size_t skipped = std::count_if(outcomes.begin(), outcomes.end(), [](const Outcome& r) { return r.skipped; });
  fmt::print(out, "GPU (CUDA{}): {} passed, {} failed, {} skipped\n", o.sanitize ? ", compute-sanitizer" : "",
             outcomes.size() - failed - skipped, failed, skipped);
  return failed ? support::kVerifyFailed : support::kOk;
}

class CudaBackend : public verify::GpuBackend {
 public:
  int verify(const std::vector<ir::Kernel>& kernels, const VerifyOptions& options, std::ostream& out,
             std::ostream&) const override {
    return verify_on_gpu(kernels, options, out);
  }
};

}  // namespace

const verify::GpuBackend& gpu_backend() {
  static const CudaBackend backend;
  return backend;
}

}  // namespace mtlgen::cuda
