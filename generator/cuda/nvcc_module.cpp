// The CUDA module of a kernel: its CUDA sources, the simulator's bridge and reference, compiled by
// nvcc into one program per kernel (a family: with its kernels), kept in the cache by content.
#include <fmt/format.h>
#include <fmt/ostream.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <sstream>

#include "cuda/cuda_emitter.h"
#include "cuda/gpu_run.h"
#include "emit_common/emitter.h"
#include "support/embedded_files.h"
#include "support/hash.h"
#include "support/output_set.h"
#include "verify/case_runner.h"

namespace mtlgen::support {
const std::vector<EmbeddedFile>& mtlgen_verify_files();  // the simulator's shim (host_dispatch.h)
}

namespace mtlgen::cuda {

using verify::ModuleOptions;

namespace {

// -lineinfo: compute-sanitizer names the .metal line of each access. -arch=native: the GPU of the
// machine that compiles is the one that runs.
// -fmad=false: no a*b+c contracted into one rounding, as in the simulator and the reference.
const char* kNvccFlags = "-std=c++20 -O3 -arch=native -lineinfo -fmad=false --expt-relaxed-constexpr -Xcompiler -Wno-attributes "
                         "-diag-suppress 177,550,20012";

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The kernel (a family: with its kernels) and what its program links: host descriptions,
// references and the simulator's bridges.
support::OutputSet gpu_sources(const ir::Kernel& k) {
  std::vector<ir::Kernel> kernels = {k};
  if (k.is_family()) kernels.insert(kernels.end(), k.family->kernels.begin(), k.family->kernels.end());
  support::OutputSet files = emit::run_emitters({"types", "reference", "sim"}, kernels);
  for (const auto& f : support::mtlgen_verify_files()) files.add("shim/" + std::string(f.path), std::string(f.bytes));
  emit::emit_cuda(k, files);
  return files;
}

GpuModule build_module(const ir::Kernel& k, const ModuleOptions& o, const fs::path& nvcc) {
  GpuModule m;
  support::OutputSet files;
  try {
    files = gpu_sources(k);
  } catch (const std::exception& e) {
    m.error = e.what();
    return m;
  }
  std::string key = nvcc.string() + "\n" + kNvccFlags + "\n";
  for (const auto& [path, content] : files.files()) key += path + "\n" + support::hash_hex(content) + "\n";
  fs::path dir = verify::cache_dir(o) / "cuda" / fmt::format("{}-{}", k.name, support::hash_hex(key));
  m.executable = fs::absolute(dir / (k.name + "_cuda"));
  m.cached = fs::exists(m.executable);
  if (m.cached) return m;
  support::write_outputs(files, dir);
  std::vector<std::string> argv = {nvcc.string()};
  for (const auto& f : words(kNvccFlags)) argv.push_back(f);
  for (const char* include : {"cuda_shim", "shim", "."}) argv.insert(argv.end(), {"-I", include});
  if (k.is_source()) argv.insert(argv.end(), {"-I", emit::cuda_dir(k)});  // its headers, as its includes name them
  for (const auto& unit : emit::cuda_compile_units(k)) argv.push_back(unit);
  argv.insert(argv.end(), {"-o", m.executable.string()});
  if (o.verbose) fmt::print(stderr, "mtlgen: (in {}) {}\n", dir.string(), fmt::join(argv, " "));
  int status = 0;
  std::string output = verify::run_program(argv, dir, status, o.compile_timeout_seconds);
  if (status != 0) {
    m.error = fmt::format("nvcc failed on the CUDA flavour of {} (in {}):\n{}", k.name, dir.string(), output);
    fs::remove(m.executable);
  }
  return m;
}

// nvcc: $MTLGEN_NVCC, else on PATH, else /usr/local/cuda/bin/nvcc; nullopt when none exists.
std::optional<fs::path> find_nvcc() {
  if (const char* e = std::getenv("MTLGEN_NVCC"); e && *e) return fs::exists(e) ? std::optional<fs::path>(e) : std::nullopt;
  if (const char* path = std::getenv("PATH")) {
    std::istringstream dirs(path);
    for (std::string d; std::getline(dirs, d, ':');)
      if (!d.empty() && ::access((fs::path(d) / "nvcc").c_str(), X_OK) == 0) return fs::path(d) / "nvcc";
  }
  if (::access("/usr/local/cuda/bin/nvcc", X_OK) == 0) return fs::path("/usr/local/cuda/bin/nvcc");
  return std::nullopt;
}

// The one line `--gpu cuda` prints where there is no nvcc (CI has none).
std::string nvcc_missing_line(const char* command) {
  return fmt::format("mtlgen {}: --gpu cuda skipped: no nvcc (not on PATH, not /usr/local/cuda/bin/nvcc, "
                     "MTLGEN_NVCC unset); run it on a machine with an NVIDIA GPU and the CUDA toolkit\n", command);
}

// A toolkit without a GPU (a build machine, CI): said once, before nvcc spends a minute on
// modules that could only fail every case with cudaErrorInsufficientDriver.
bool nvidia_driver_loaded() {
  return fs::exists("/proc/driver/nvidia/version") || fs::exists("/dev/nvidiactl");
}

std::string gpu_missing_line(const char* command) {
  return fmt::format("mtlgen {}: --gpu cuda skipped: nvcc is here but no NVIDIA GPU is (no driver: "
                     "/proc/driver/nvidia/version and /dev/nvidiactl are missing); run it on a machine with an "
                     "NVIDIA GPU\n", command);
}

}  // namespace

std::optional<fs::path> usable_nvcc(const char* command, std::ostream& out) {
  auto nvcc = find_nvcc();
  if (!nvcc) fmt::print(out, "{}", nvcc_missing_line(command));
  else if (!nvidia_driver_loaded()) fmt::print(out, "{}", gpu_missing_line(command));
  else return nvcc;
  return std::nullopt;
}

std::map<std::string, GpuModule> build_modules(const std::vector<const ir::Kernel*>& kernels, const ModuleOptions& mo,
                                               const fs::path& nvcc, int jobs, std::ostream& out) {
  std::map<std::string, GpuModule> modules;
  std::mutex mutex;
  support::parallel_for(kernels.size(), jobs, [&](size_t i) {
    double start = verify::monotonic_seconds();
    GpuModule m = build_module(*kernels[i], mo, nvcc);
    std::lock_guard lock(mutex);
    fmt::print(out, "{}: CUDA module {} ({:.1f} s)\n", kernels[i]->name,
               !m.error.empty() ? "FAILED" : m.cached ? "cached" : "compiled", verify::monotonic_seconds() - start);
    if (!m.error.empty()) fmt::print(out, "{}\n", m.error);
    modules[kernels[i]->name] = std::move(m);
  });
  return modules;
}

std::vector<const ir::Kernel*> gpu_kernels(const std::vector<ir::Kernel>& kernels) {
  std::vector<const ir::Kernel*> list;
  for (const auto& k : kernels) list.push_back(&k);
  return list;
}

fs::path case_dir(const ModuleOptions& mo, size_t index) {
  return verify::cache_dir(mo) / "cuda" / fmt::format("cases-{}", ::getpid()) / std::to_string(index);
}

}  // namespace mtlgen::cuda
