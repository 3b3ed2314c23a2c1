#include "verify/gpu_cuda.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>
#include <thread>

#include "emit_common/emitter.h"
#include "emit_cuda/cuda_emitter.h"
#include "emit_msl/msl_emitter.h"
#include "support/embedded_files.h"
#include "support/exit_code.h"
#include "support/hash.h"
#include "support/output_set.h"
#include "verify/case_runner.h"
#include "verify/compare.h"
#include "verify/dispatch_setup.h"
#include "verify/elements.h"
#include "verify/inputs.h"
#include "spec/library.h"
#include <nlohmann/json.hpp>

namespace mtlgen::support {
const std::vector<EmbeddedFile>& mtlgen_verify_files();  // the simulator's shim (host_dispatch.h)
}

namespace mtlgen::verify {

namespace fs = std::filesystem;

namespace {

// -lineinfo: compute-sanitizer names the .metal line of each access. -arch=native: the GPU of the
// machine that compiles is the one that runs.
// -fmad=false: no a*b+c contracted into one rounding, as in the simulator and the reference.
const char* kNvccFlags = "-std=c++20 -O3 -arch=native -lineinfo -fmad=false --expt-relaxed-constexpr -Xcompiler -Wno-attributes "
                         "-diag-suppress 177,550,20012";
const char* kSanitizerTools[] = {"memcheck", "racecheck", "synccheck", "initcheck"};

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_bytes(const fs::path& p, const void* data, size_t bytes) {
  std::ofstream out(p, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
}

// Runs `jobs` copies of `work(i)` over i in [0, count).
template <class F>
void parallel_for(size_t count, int jobs, F work) {
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < std::max(1, jobs); ++t)
    threads.emplace_back([&] {
      for (size_t i; (i = next++) < count;) work(i);
    });
  for (auto& t : threads) t.join();
}

int job_count(int requested) {
  return requested > 0 ? requested : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// ---- the module: the CUDA sources, the simulator's bridge and reference, compiled by nvcc ----

struct GpuModule {
  fs::path executable;
  bool cached = false;
  std::string error;  // compile failure, with nvcc's diagnostics
};

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
  fs::path dir = cache_dir(o) / "cuda" / fmt::format("{}-{}", k.name, support::hash_hex(key));
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
  std::string output = run_program(argv, dir, status, o.compile_timeout_seconds);
  if (status != 0) {
    m.error = fmt::format("nvcc failed on the CUDA flavour of {} (in {}):\n{}", k.name, dir.string(), output);
    fs::remove(m.executable);
  }
  return m;
}

// ---- one case: inputs written for the runner, its answer read back ----

struct GpuBuffer {
  const ir::Buffer* decl;
  ir::ScalarType type;
  std::vector<int64_t> shape;
  size_t elements = 1;
  size_t bytes() const { return elements * static_cast<size_t>(ir::info(type).size); }
};

struct GpuCase {
  const ir::Kernel* kernel;
  const ir::Variant* variant;
  const ir::TestCase* test;
  ir::ConstantSetting constants;
};

double scalar_of(const ir::Kernel& k, const ir::TestCase& t, const std::string& name) {
  if (t.scalars.count(name)) return t.scalars.at(name);
  for (const auto& s : k.scalars)
    if (s.name == name) return s.default_value;
  return 0;
}

// A hand-written kernel's argument blobs (Metal layout from the front end), as the simulator path
// fills them: integer expressions of dims and tunables, or spec scalars.
std::vector<std::vector<uint8_t>> argument_blobs(const GpuCase& c, const expr::Env& env) {
  std::vector<std::vector<uint8_t>> blobs;
  for (const auto& blob : c.variant->arguments) {
    std::vector<uint8_t> bytes(std::max<uint64_t>(blob.bytes, 16), 0);
    for (const auto& slot : blob.slots) {
      uint8_t* at = bytes.data() + slot.offset;
      if (slot.kind == ir::ArgumentSlot::Kind::floating) {
        double v = slot.scalar.empty() ? double(expr::evaluate(*slot.integer, env)) : scalar_of(*c.kernel, *c.test, slot.scalar);
        store_element(slot.size == 2 ? ir::ScalarType::f16 : ir::ScalarType::f32, at, 0, v);
        continue;
      }
      int64_t v = slot.scalar.empty() ? expr::evaluate(*slot.integer, env) : int64_t(scalar_of(*c.kernel, *c.test, slot.scalar));
      if (slot.kind == ir::ArgumentSlot::Kind::boolean) v = v != 0;
      std::memcpy(at, &v, static_cast<size_t>(slot.size));  // little-endian: the low bytes
    }
    blobs.push_back(std::move(bytes));
  }
  return blobs;
}

const char* role_of(const ir::Buffer& b) {
  if (b.intermediate) return "scratch";
  return b.access == ir::Access::read ? "in" : b.access == ir::Access::write ? "out" : "inout";
}

std::string list_line(const char* key, const auto& values) {
  return fmt::format("{} {} {}\n", key, values.size(), fmt::join(values, " "));
}

// `dims`, `scalars` and `constants` lines of a call of `k` (a kernel or a reference).
std::string values_text(const ir::Kernel& k, const std::map<std::string, int64_t>& dims, const ScalarValue& scalar,
                        const ir::ConstantSetting& constants) {
  std::vector<std::string> scalars, values;
  for (double s : scalar_values(k, scalar)) scalars.push_back(fmt::format("{:.17g}", s));
  for (double v : constants.empty() ? k.default_constants() : constants) values.push_back(fmt::format("{:.17g}", v));
  return list_line("dims", dims_values(k, dims)) + list_line("scalars", scalars) + list_line("constants", values);
}

std::string dispatch_text(const ir::Kernel& k, const ir::Variant& v, size_t module, const std::string& values,
                          const std::vector<size_t>& slots) {
  return fmt::format("{} {} {}\n{}{}", module, &v - k.variants.data(), v.entry_point, values, list_line("slots", slots));
}

// A family's dispatches as its glue makes them (the simulator's family runner resolves them the
// same way): each kernel's dims, serving variant, scalars and buffers bound to the family's.
// Throws std::runtime_error where the case's dims make a dispatch invalid.
std::string family_dispatches(const GpuCase& c, const std::vector<GpuBuffer>& buffers) {
  const ir::Family& f = *c.kernel->family;
  std::string text = fmt::format("dispatches {}\n", f.dispatches.size());
  for (size_t i = 0; i < f.dispatches.size(); ++i) {
    const ir::FamilyDispatch& d = f.dispatches[i];
    const ir::Kernel& member = f.kernel_of(d);
    const auto dims = f.member_dims(d, c.test->dims, *c.variant);
    const ir::Variant& v = member.serving_variant(dims, f.member_types(d, *c.variant));
    std::string problem = member.dims_violation(dims);
    if (problem.empty()) problem = member.variant_violation(dims, v);
    if (!problem.empty())
      throw std::runtime_error(fmt::format("dispatch {} (`{}`) gets dims it does not accept: {}", i + 1, member.name, problem));
    const expr::Env env = ir::Kernel::env_for(dims, v);
    std::vector<size_t> slots;
    for (const auto& mb : member.buffers) {
      const std::string& name = ir::Family::bound(d.buffers, mb.name);
      auto at = std::find_if(buffers.begin(), buffers.end(), [&](const GpuBuffer& b) { return b.decl->name == name; });
      if (at == buffers.end() || size_t(mb.elements(env)) > at->elements)
        throw std::runtime_error(fmt::format("dispatch {} (`{}`): the family's `{}` is too small for its `{}`", i + 1,
                                             member.name, name, mb.name));
      slots.push_back(size_t(at - buffers.begin()));
    }
    auto scalar = [&](const std::string& s) { return scalar_of(*c.kernel, *c.test, ir::Family::bound(d.scalars, s)); };
    text += dispatch_text(member, v, d.member, values_text(member, dims, scalar, {}), slots);
  }
  return text;
}

// Writes case.txt and the inputs into `dir`; returns the buffers.
std::vector<GpuBuffer> prepare_case(const GpuCase& c, const fs::path& dir, const std::string& mode) {
  const ir::Kernel& k = *c.kernel;
  fs::create_directories(dir);
  expr::Env env = ir::Kernel::env_for(c.test->dims, *c.variant);
  uint64_t seed = c.test->seed.value_or(k.tests.seed);
  auto scalar = [&](const std::string& n) { return scalar_of(k, *c.test, n); };
  const std::string values = values_text(k, c.test->dims, scalar, c.constants);
  std::vector<GpuBuffer> buffers;
  std::string text = fmt::format("reference {}\n{}buffers {}\n", reference_symbol(k, *c.variant), values, k.buffers.size());
  for (size_t i = 0; i < k.buffers.size(); ++i) {
    const ir::Buffer& decl = k.buffers[i];
    GpuBuffer b{&decl, decl.type.resolve(c.variant->types), {}, 1};
    for (const auto& e : decl.shape) {
      b.shape.push_back(expr::evaluate(e, env));
      b.elements *= static_cast<size_t>(std::max<int64_t>(b.shape.back(), 0));
    }
    text += fmt::format("{} {} {} {}\n", decl.name, ir::info(b.type).size, b.elements, role_of(decl));
    if (decl.access != ir::Access::write && !decl.intermediate) {
      std::vector<uint8_t> data(b.bytes());
      fill_input(k.input_fill(*c.test, decl.name), b.type, data.data(), b.elements, buffer_seed(seed, decl.name), k.block_of(decl));
      write_bytes(dir / fmt::format("in_{}.bin", i), data.data(), data.size());
    }
    buffers.push_back(std::move(b));
  }
  auto blobs = argument_blobs(c, env);
  std::vector<size_t> sizes;
  for (size_t i = 0; i < blobs.size(); ++i) {
    write_bytes(dir / fmt::format("arg_{}.bin", i), blobs[i].data(), blobs[i].size());
    sizes.push_back(blobs[i].size());
  }
  text += list_line("arguments", sizes);
  if (k.is_family()) {
    text += family_dispatches(c, buffers);
  } else {
    std::vector<size_t> slots(k.buffers.size());
    for (size_t i = 0; i < slots.size(); ++i) slots[i] = i;
    text += "dispatches 1\n" + dispatch_text(k, *c.variant, 0, values, slots);
  }
  text += "mode " + mode + "\n";
  write_bytes(dir / "case.txt", text.data(), text.size());
  return buffers;
}

// result.txt: `key value` lines, ending in `ok` or `error <message>`.
std::map<std::string, std::string> read_result(const fs::path& dir) {
  std::map<std::string, std::string> r;
  std::istringstream in(read_text(dir / "result.txt"));
  for (std::string line; std::getline(in, line);) {
    size_t space = line.find(' ');
    r[line.substr(0, space)] = space == std::string::npos ? "" : line.substr(space + 1);
  }
  return r;
}

// ---- verify ----

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

// A .metal file a program runs: its kernel and text (empty for a hand-written file, whose lines
// are its own).
struct MetalFile {
  const ir::Kernel* kernel;
  std::string msl;
};

// The .metal files of `k`'s program by file name: a family's kernels', else its own.
std::map<std::string, MetalFile> metal_files(const ir::Kernel& k) {
  std::map<std::string, MetalFile> files;
  auto add = [&](const ir::Kernel& m) {
    files[m.name + ".metal"] = {&m, m.is_source() ? std::string() : emit::msl_source(m)};  // emit_cuda's name
  };
  if (!k.is_family()) add(k);
  else
    for (const auto& m : k.family->kernels) add(m);
  return files;
}

// "… in /cache/cuda/argmax-…/cuda/argmax/argmax.metal:45" -> "… at line 45 (specs/argmax.yaml:38)".
std::string located(const std::map<std::string, MetalFile>& files, const std::string& text) {
  static const std::regex kWhere(R"((?:\S*/)?([A-Za-z0-9_.-]+\.metal):(\d+))");
  std::string out;
  auto begin = std::sregex_iterator(text.begin(), text.end(), kWhere);
  size_t at = 0;
  for (auto m = begin; m != std::sregex_iterator(); ++m) {
    out += text.substr(at, static_cast<size_t>(m->position()) - at);
    int line = std::stoi((*m)[2]);
    auto file = files.find((*m)[1].str());
    std::string note = file == files.end() ? "" : spec_line_note(*file->second.kernel, file->second.msl, line);
    out += fmt::format("line {} of {}{}", line, (*m)[1].str(), note);
    at = static_cast<size_t>(m->position() + m->length());
  }
  return out + text.substr(at);
}

// A line of a report worth showing: not the banner, a summary of none, host backtraces, saved
// values or the generated wrapper's frame (the kernel's own frames name the .metal lines).
bool worth_showing(const std::string& body) {
  for (const char* noise : {"COMPUTE-SANITIZER", "ERROR SUMMARY: 0 ", "SUMMARY: 0 hazards", "Host Frame",
                            "Saved host backtrace", "Current Value", "Device Frame: mtlcu_kernel_"})
    if (body.find(noise) != std::string::npos) return false;
  return body.find_first_not_of(' ') != std::string::npos;
}

// compute-sanitizer's findings, its `=========` lines: a frame's signature dropped (`at` or
// `Device Frame:` then the .metal line), lines that differ only in addresses shown once (a hazard
// repeats per byte), at most 16.
std::string sanitizer_findings(const std::string& output) {
  static const std::regex kFrame(R"(((?:at|Device Frame:) )(?:void )?\S.*\+0x[0-9a-f]+ in )"), kAddress("0x[0-9a-f]+");
  std::vector<std::string> seen;
  std::string found;
  size_t more = 0;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("========= ", 0) != 0 || !worth_showing(line.substr(10))) continue;
    std::string body = std::regex_replace(line.substr(10), kFrame, "$1");
    std::string key = std::regex_replace(body, kAddress, "0x");
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(key);
    if (seen.size() > 16) ++more;
    else found += "      " + body + "\n";
  }
  if (more) found += fmt::format("      ({} more lines)\n", more);
  return found;
}

void compare_outputs(const GpuCase& c, const std::vector<GpuBuffer>& buffers, const fs::path& dir, Outcome& o) {
  for (size_t i = 0; i < buffers.size(); ++i) {
    const GpuBuffer& b = buffers[i];
    if (!b.decl->is_output() || b.decl->intermediate) continue;
    std::string got = read_text(dir / fmt::format("gpu_{}.bin", i));
    std::string want = read_text(dir / fmt::format("ref_{}.bin", i));
    if (got.size() != b.bytes() || want.size() != b.bytes()) {
      o.problems.push_back(fmt::format("error: output `{}` did not come back whole from the runner", b.decl->name));
      continue;
    }
    auto tol = tolerance_for(*c.kernel, b.decl->name, b.type);
    OutputStats s = compare_output(b.decl->name, b.type, b.shape, got.data(), want.data(), b.elements, tol);
    if (!s.mismatches && !s.nmse_failed) continue;
    o.problems.push_back(fmt::format("mismatch: {} of {} elements of `{}` differ from the reference (max abs {:g}): {}",
                                     s.mismatches, s.elements, b.decl->name, s.max_abs, fmt::join(s.examples, "; ")));
  }
}

void sanitize(const GpuCase& c, const fs::path& exe, const fs::path& dir, double timeout, Outcome& o) {
  const auto files = metal_files(*c.kernel);
  for (const char* tool : kSanitizerTools) {
    std::vector<std::string> argv = {"compute-sanitizer", "--tool", tool, "--error-exitcode", "99",
                                     "--print-limit", "10", exe.string(), dir.string()};
    if (std::string(tool) == "racecheck") argv.insert(argv.begin() + 3, {"--racecheck-report", "hazard"});
    int status = 0;
    std::string output = run_program(argv, dir, status, timeout * 3);  // the tools slow a kernel down
    std::string found = sanitizer_findings(output);
    if (status == 0 && found.empty()) continue;
    o.problems.push_back(fmt::format("compute-sanitizer {} (exit {}):\n{}", tool, status, located(files, found)));
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
  std::vector<GpuBuffer> buffers;
  try {
    buffers = prepare_case(c, dir, "verify");
  } catch (const std::runtime_error& e) {
    o.problems.push_back(fmt::format("error: {}", e.what()));
    return o;
  }
  int status = 0;
  std::string output = run_program({m.executable.string(), dir.string()}, dir, status, opts.timeout_seconds);
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
  if (opts.sanitize) sanitize(c, m.executable, dir, opts.timeout_seconds, o);
  o.passed = o.problems.empty();
  return o;
}

// The variant x case x constants selection of the simulator path (verify.cpp's plan).
std::vector<GpuCase> plan_cases(const std::vector<ir::Kernel>& kernels, const VerifyOptions& o) {
  std::vector<GpuCase> cases;
  for (const auto& k : kernels) {
    for (const auto& v : k.variants) {
      if (!o.all_variants && !v.is_default_tuning) continue;
      for (const auto& t : k.tests.cases) {
        if (!o.case_filter.empty() && t.name != o.case_filter) continue;
        if (t.benchmark && t.name != o.case_filter) continue;
        const ir::Variant& run = o.all_variants ? v : k.serving_variant(t.dims, v.types);
        for (auto& constants : k.constant_settings(t)) cases.push_back({&k, &run, &t, std::move(constants)});
      }
    }
  }
  return cases;
}

std::map<std::string, GpuModule> build_modules(const std::vector<const ir::Kernel*>& kernels, const ModuleOptions& mo,
                                               const fs::path& nvcc, int jobs, std::ostream& out) {
  std::map<std::string, GpuModule> modules;
  std::mutex mutex;
  parallel_for(kernels.size(), jobs, [&](size_t i) {
    double start = monotonic_seconds();
    GpuModule m = build_module(*kernels[i], mo, nvcc);
    std::lock_guard lock(mutex);
    fmt::print(out, "{}: CUDA module {} ({:.1f} s)\n", kernels[i]->name,
               !m.error.empty() ? "FAILED" : m.cached ? "cached" : "compiled", monotonic_seconds() - start);
    if (!m.error.empty()) fmt::print(out, "{}\n", m.error);
    modules[kernels[i]->name] = std::move(m);
  });
  return modules;
}

// Every kernel runs on the GPU: a family as one program of its kernels' dispatches.
std::vector<const ir::Kernel*> gpu_kernels(const std::vector<ir::Kernel>& kernels) {
  std::vector<const ir::Kernel*> list;
  for (const auto& k : kernels) list.push_back(&k);
  return list;
}

fs::path case_dir(const ModuleOptions& mo, size_t index) {
  return cache_dir(mo) / "cuda" / fmt::format("cases-{}", ::getpid()) / std::to_string(index);
}

}  // namespace

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

// nvcc and a GPU, or the one line that says which is missing.
std::optional<fs::path> usable_nvcc(const char* command, std::ostream& out) {
  auto nvcc = find_nvcc();
  if (!nvcc) fmt::print(out, "{}", nvcc_missing_line(command));
  else if (!nvidia_driver_loaded()) fmt::print(out, "{}", gpu_missing_line(command));
  else return nvcc;
  return std::nullopt;
}

int run_gpu_verify(const std::vector<ir::Kernel>& kernels, const VerifyOptions& o, std::ostream& out, std::ostream& err) {
  auto nvcc = usable_nvcc("verify", out);
  if (!nvcc) return support::kOk;
  auto modules = build_modules(gpu_kernels(kernels), o.module, *nvcc, job_count(o.jobs), out);
  std::vector<GpuCase> cases = plan_cases(kernels, o);
  std::erase_if(cases, [&](const GpuCase& c) { return !modules.count(c.kernel->name); });
  std::vector<Outcome> outcomes(cases.size());
  std::mutex mutex;
  std::atomic<size_t> done{0};
  // The GPU runs one case at a time well; sanitizer runs are mostly host time, so jobs help there.
  parallel_for(cases.size(), o.sanitize ? job_count(o.jobs) : std::min(job_count(o.jobs), 8), [&](size_t i) {
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
  (void)err;
  return failed ? support::kVerifyFailed : support::kOk;
}

namespace {

// The cases bench times for `k`: --case, else the spec's benchmark cases, else its largest test case.
std::vector<const ir::TestCase*> bench_cases(const ir::Kernel& k, const BenchOptions& o) {
  std::vector<const ir::TestCase*> out;
  for (const auto& t : k.tests.cases)
    if (o.case_filter.empty() ? t.benchmark : t.name == o.case_filter) out.push_back(&t);
  if (!out.empty() || !o.case_filter.empty() || k.tests.cases.empty()) return out;
  auto size = [](const ir::TestCase& t) {
    int64_t n = 1;
    for (const auto& [name, v] : t.dims) n *= std::max<int64_t>(v, 1);
    return n;
  };
  out.push_back(&*std::max_element(k.tests.cases.begin(), k.tests.cases.end(),
                                   [&](const auto& a, const auto& b) { return size(a) < size(b); }));
  return out;
}

// Bytes the spec's cost model says a dispatch moves (read + written); 0 where it gives none.
double bytes_moved(const ir::Kernel& k, const ir::TestCase& t, const ir::Variant& v) {
  expr::Env env = ir::Kernel::env_for(t.dims, v);
  double bytes = 0;
  try {
    if (k.cost.bytes_read) bytes += double(expr::evaluate(*k.cost.bytes_read, env));
    if (k.cost.bytes_written) bytes += double(expr::evaluate(*k.cost.bytes_written, env));
  } catch (const expr::EvalError&) {
    return 0;
  }
  return bytes;
}

std::string dims_text(const ir::TestCase& t) {
  std::vector<std::string> parts;
  for (const auto& [name, v] : t.dims) parts.push_back(fmt::format("{}={}", name, v));
  return fmt::format("{}", fmt::join(parts, ", "));
}

struct Timing {
  const ir::Variant* variant = nullptr;
  double median_us = 0, min_us = 0, gbps = 0;
  std::string error;
};

Timing time_variant(const ir::Kernel& k, const ir::TestCase& t, const ir::Variant& v, const GpuModule& m,
                    const BenchOptions& o, const fs::path& dir, std::map<std::string, std::string>& device) {
  Timing r;
  r.variant = &v;
  try {
    prepare_case({&k, &v, &t, {}}, dir, fmt::format("bench {} {}", o.warmups, o.repeats));
  } catch (const std::runtime_error& e) {
    r.error = e.what();
    return r;
  }
  int status = 0;
  std::string output = run_program({m.executable.string(), dir.string()}, dir, status, 600);
  auto result = read_result(dir);
  if (status != 0 || !result.count("ok")) {
    r.error = result.count("error") ? result["error"] : fmt::format("exit status {}: {}", status, output.substr(0, 500));
    return r;
  }
  device["device"] = result["device"];
  device["peak_gbps"] = result["peak_gbps"];
  r.median_us = std::stod(result["median_us"]);
  r.min_us = std::stod(result["min_us"]);
  double bytes = bytes_moved(k, t, v);
  r.gbps = bytes > 0 ? bytes / (r.median_us * 1e3) : 0;
  return r;
}

// One line per tune point, grouped by element types, the fastest of each group marked.
void print_sweep(std::ostream& out, const ir::Kernel& k, const ir::TestCase& t, const std::vector<Timing>& timings,
                 double peak) {
  std::map<std::string, std::vector<const Timing*>> by_types;
  for (const auto& r : timings) {
    std::vector<std::string> types;
    for (const auto& [name, type] : r.variant->types) types.push_back(fmt::format("{}={}", name, ir::info(type).suffix));
    by_types[fmt::format("{}", fmt::join(types, ", "))].push_back(&r);
  }
  for (const auto& [types, group] : by_types) {
    fmt::print(out, "  {} {}\n", k.name, types.empty() ? "" : "(" + types + ")");
    const Timing* best = nullptr;
    for (const Timing* r : group)
      if (r->error.empty() && (!best || r->median_us < best->median_us)) best = r;
    for (const Timing* r : group) {
      if (!r->error.empty()) {
        fmt::print(out, "    {:<28} error: {}\n", k.describe_tuning(*r->variant), r->error);
        continue;
      }
      std::string share = peak > 0 && r->gbps > 0 ? fmt::format(" ({:.0f}% of peak)", 100 * r->gbps / peak) : "";
      fmt::print(out, "    {:<28} {:>10.2f} us  {:>8.1f} GB/s{}{}\n", k.describe_tuning(*r->variant), r->median_us, r->gbps,
                 share, r == best ? "  <- best" : "");
    }
  }
  (void)t;
}

nlohmann::json sweep_json(const ir::Kernel& k, const ir::TestCase& t, const std::vector<Timing>& timings) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& r : timings) {
    nlohmann::json j = {{"kernel", k.name}, {"case", t.name}, {"dims", t.dims}, {"entry_point", r.variant->entry_point},
                        {"tuning", r.variant->tunables}};
    nlohmann::json types = nlohmann::json::object();
    for (const auto& [name, type] : r.variant->types) types[name] = ir::info(type).suffix;
    j["types"] = types;
    if (!r.error.empty()) j["error"] = r.error;
    else j.update({{"median_us", r.median_us}, {"min_us", r.min_us}, {"gb_per_s", r.gbps}});
    list.push_back(j);
  }
  return list;
}

}  // namespace

int run_gpu_bench(const BenchOptions& o, std::ostream& out, std::ostream& err) {
  support::Diagnostics diags;
  auto kernels = spec::load_library(spec::collect_spec_files(o.inputs, diags), diags, o.include_dirs);
  fmt::print(err, "{}", diags.format_all());
  if (diags.has_errors()) return support::kSpecErrors;
  auto nvcc = usable_nvcc("bench", out);
  if (!nvcc) return support::kOk;
  std::vector<const ir::Kernel*> selected;
  for (const ir::Kernel* k : gpu_kernels(kernels))
    if (o.kernel_filter.empty() || k->name == o.kernel_filter) selected.push_back(k);
  auto modules = build_modules(selected, o.module, *nvcc, job_count(0), out);
  nlohmann::json results = nlohmann::json::array();
  std::map<std::string, std::string> device;
  bool failed = false;
  for (const ir::Kernel* k : selected) {
    const GpuModule& m = modules.at(k->name);
    if (!m.error.empty()) {
      fmt::print(out, "{}: {}\n", k->name, m.error);
      failed = true;
      continue;
    }
    for (const ir::TestCase* t : bench_cases(*k, o)) {
      std::vector<Timing> timings;
      for (const auto& v : k->variants) {
        if (!k->variant_violation(t->dims, v).empty()) continue;
        timings.push_back(time_variant(*k, *t, v, m, o, case_dir(o.module, 0), device));
        failed |= !timings.back().error.empty();
      }
      double peak = device.count("peak_gbps") ? std::stod(device["peak_gbps"]) : 0;
      fmt::print(out, "{} {} ({}) on {} (DRAM peak {:.0f} GB/s), median of {} launches after {} warm-ups, L2 flushed:\n",
                 k->name, t->name, dims_text(*t), device["device"], peak, o.repeats, o.warmups);
      print_sweep(out, *k, *t, timings, peak);
      for (auto& j : sweep_json(*k, *t, timings)) results.push_back(j);
    }
  }
  std::error_code ignored;
  fs::remove_all(case_dir(o.module, 0).parent_path(), ignored);
  if (!o.json_path.empty()) {
    nlohmann::json doc = {{"gpu", device["device"]},
                          {"dram_peak_gb_per_s", device.count("peak_gbps") ? std::stod(device["peak_gbps"]) : 0.0},
                          {"note", "CUDA timings of the MSL on an NVIDIA GPU: a relative guide between variants, not an Apple GPU timing"},
                          {"warmups", o.warmups}, {"repeats", o.repeats}, {"results", results}};
    std::ofstream(o.json_path) << doc.dump(2) << "\n";
  }
  return failed ? support::kVerifyFailed : support::kOk;
}

}  // namespace mtlgen::verify
