#include "verify/sim_module.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <functional>
#include <iterator>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "emit_common/emitter.h"
#include "emit_msl/msl_emitter.h"
#include "emit_reference/reference_emitter.h"
#include "emit_sim/sim_emitter.h"
#include "msl/msl_unit.h"
#include "mtlsim/msl_source.h"
#include "verify/module_prelude.h"
#include "support/hash.h"
#include "support/output_set.h"
#include "support/templates.h"
#include "support/include_policy.h"

namespace mtlgen::verify {

namespace fs = std::filesystem;
using support::TemplateData;

namespace {

// The kernel's TU at -O2, the host side (bridge and reference) at -O1: a module is compiled for
// one run whose cases are mostly small, so compile time dominates, but the kernel's line tables
// locate findings, and at -O1 g++ moves a comparison onto the line of the branch before it.
const char* kKernelOptimization = "-O2";
const char* kHostOptimization = "-O1";
// -g1: line tables, so that crash and hang reports name the faulting or stuck line in every mode.
// The sanitizer flags report poison that decides a comparison or becomes an integer, and arrays
// indexed outside their bounds; every TU defines their hooks (mtlsim/poison_hooks.h), so no sanitizer runtime is linked.
const char* kFlags = "-std=c++20 -g1 -gdwarf-4 -fPIC -Wno-attributes -Wno-unused-parameter "
                     "-fsanitize-coverage=trace-cmp -fsanitize=float-cast-overflow -fsanitize=bounds -static-libubsan "
                     "-include mtlsim/poison_hooks.h";
// Only the launchers' TU (the kernel) is instrumented; the reference runs plain. Line tables
// for the race reports; DWARF 4 because addr2line 2.40 names the wrong file for DWARF 5 line
// tables of template instantiations (their own sections).
const char* kRaceFlags = "-fsanitize=thread -g1 -gdwarf-4";
// For the advisor's counters (mtlsim/access_counter.h): a hook call before every load and store,
// and the barrier and simd-function counters of mtlsim/counter_hooks.h.
const char* kCountFlags = "-fsanitize=kernel-address --param=asan-instrumentation-with-call-threshold=0 "
                          "--param=asan-stack=0 --param=asan-globals=0 -include mtlsim/access_hooks.h -DMTLSIM_COUNTERS";

// The extra flags of the launchers' TU (the kernel): "" for a plain module.
std::string instrumentation(const ModuleOptions& o) {
  return std::string(o.race_instrumented ? kRaceFlags : "") + (o.access_counted ? std::string(" ") + kCountFlags : "");
}
// exit() in spec code goes to the case child's __wrap_exit (case_runner.cpp), which names it:
// by the time libc's exit handlers ran, thread-local destructors would have torn the fibers down.
const char* kLinkFlags = "-Wl,--wrap=exit";

const char* kHostUnit = "host.cpp";
// In a hand-written kernel's module key: the entry points it runs (its kernel object may hold more).
const char* kRunsEntries = "runs_entries";

// Every source file of the module, by path relative to its directory: what the types, reference
// and simulator emitters write for the kernel (the simulator's launchers include the MSL). The
// shim is the cache's one copy (shared_shim).
support::OutputSet module_sources(const ir::Kernel& k, const std::set<std::string>& entry_points) {
  support::OutputSet files = emit::run_emitters({"types", "reference"}, {k});
  emit::emit_sim_variants(k, entry_points, files);
  // The host side (bridge and reference) as one translation unit: the standard library is parsed
  // once, not twice (0.85 s of rms_norm's 4.5 s module).
  files.add(kHostUnit, fmt::format("#include \"{}\"\n#include \"{}/{}_reference.cpp\"\n", emit::sim_bridge_path(k),
                                   k.name, k.name));
  return files;
}

const char* private_init_flag(const ModuleOptions& o) {
  return o.private_init == ModuleOptions::PrivateInit::zero ? "-ftrivial-auto-var-init=zero"
                                                            : "-ftrivial-auto-var-init=pattern";
}


// Space-separated words of our own flag strings (and of the compiler setting, e.g. "ccache g++").
std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// Reads `fd` to its end into `output`, or until `deadline` (monotonic seconds); false at the deadline.
bool read_until(int fd, std::string& output, double deadline) {
  char buffer[4096];
  for (;;) {
    double left = deadline - std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    int ready = ::poll(&p, 1, static_cast<int>(std::min(left * 1000 + 1, 1e9)));
    if (ready < 0 && errno != EINTR) return true;
    if (ready <= 0) continue;
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) output.append(buffer, static_cast<size_t>(n));
    else if (n == 0 || errno != EINTR) return true;
  }
}

// Runs argv[0] (found on PATH) in `cwd` with stdin from /dev/null and stdout and stderr captured,
// in a process group of its own that is killed after `timeout` seconds. No shell: a cache
// directory or spec name holding quotes or `;` stays one argument. Returns the exit status (-1
// when the compiler was killed or could not start).
std::string run_and_capture(const std::vector<std::string>& argv, const fs::path& cwd, int& status, double timeout) {
  std::vector<char*> args;  // built before fork: the child must not allocate
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("cannot create a pipe for " + argv[0]);
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("cannot fork to run " + argv[0]);
  if (pid == 0) {  // child: only async-signal-safe calls until exec
    ::setpgid(0, 0);
    int in = ::open("/dev/null", O_RDONLY);
    if (::chdir(cwd.c_str()) != 0 || in < 0 || ::dup2(in, 0) < 0 || ::dup2(fds[1], 1) < 0 || ::dup2(fds[1], 2) < 0) {
      ::_exit(127);
    }
    ::close(fds[0]);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  ::setpgid(pid, pid);
  std::string output;
  double now = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  bool finished = read_until(fds[0], output, now + timeout);
  ::kill(-pid, SIGKILL);  // a timed-out compile, or anything it left running
  ::close(fds[0]);
  if (!finished) {
    output += fmt::format("\nmtlgen: `{}` was killed after {:g} s (the compile timeout)\n", argv[0], timeout);
  }
  int raw = 0;
  while (::waitpid(pid, &raw, 0) < 0 && errno == EINTR) {
  }
  status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return output;
}

std::string command_text(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

// What `o.compiler --version` prints (first run per compiler setting, then remembered): a module
// built by another compiler version is another module.
std::string compiler_identity(const ModuleOptions& o) {
  static std::mutex mutex;
  static std::map<std::string, std::string> known;
  std::lock_guard lock(mutex);
  auto [at, added] = known.try_emplace(o.compiler);
  if (added) {
    std::vector<std::string> argv = words(o.compiler);
    argv.push_back("--version");
    int status = 0;
    at->second = o.compiler + "\n" + run_and_capture(argv, fs::current_path(), status, std::min(60.0, o.compile_timeout_seconds));
  }
  return at->second;
}

// Path and hash of each file of `files` that `reads` keeps, for a key.
std::string files_key(const support::OutputSet& files, const std::function<bool(const std::string&)>& reads) {
  std::string key;
  for (const auto& [path, content] : files.files())
    if (reads(path)) key += "\n" + path + "\n" + support::hash_hex(content);
  return key;
}

// Exactly what goes into the module: the compiler and its version, the flags, and every source
// file (the emitters' output for the kernel and the shim).
std::string module_key(const support::OutputSet& files, const ModuleOptions& o) {
  std::string all = compiler_identity(o) + "\n" + kFlags + "\n" + kKernelOptimization + " " + kHostOptimization + "\n" +
                    kLinkFlags + "\n" + instrumentation(o) + "\n" +
                    private_init_flag(o) + "\n" + shim_hash() + "\n";
  all += files_key(files, [](const std::string&) { return true; });
  return support::hash_hex(all);
}

// g++'s "FILE:LINE:" for a line of a local header's copy (numbered n * kHeaderLineStride + L,
// msl_unit.h) becomes the header's own "path:L:", as the user has it.
std::string with_header_lines(const ir::Kernel& kernel, const std::string& output) {
  if (!kernel.is_source() || kernel.source->simulator_headers.empty()) return output;
  std::vector<std::string> headers;
  for (const auto& [key, text] : kernel.source->simulator_headers) headers.push_back(text);
  static const std::regex located(R"(([^\s:]+):([0-9]{7,}):)");
  std::string out;
  auto last = output.cbegin();
  for (auto it = std::sregex_iterator(output.begin(), output.end(), located); it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    const auto in_header = msl::header_line_of(std::stoi(m[2].str()), headers);
    out.append(last, m[0].first);
    out += in_header ? fmt::format("{}:{}:", in_header->path, in_header->line) : m[0].str();
    last = m[0].second;
  }
  return out.append(last, output.cend());
}

// Runs the compiler for one module, collecting what it prints; `status` is the last exit status.
// The commands and their output go to the module's compile.log (-Winvalid-pch says there when a
// precompiled prelude could not be used).
class ModuleCompiler {
 public:
  ModuleCompiler(const fs::path& dir, const ModuleOptions& o) : dir_(dir), o_(o) {}
  ~ModuleCompiler() { std::ofstream(dir_ / "compile.log", std::ios::binary) << log_; }
  int run(const std::vector<std::string>& argv, const fs::path& cwd) {
    if (o_.verbose) fmt::print(stderr, "mtlgen: (in {}) {}\n", cwd.string(), command_text(argv));
    const std::string printed = run_and_capture(argv, cwd, status_, o_.compile_timeout_seconds);
    log_ += fmt::format("(in {}) {}\n{}", cwd.string(), command_text(argv), printed);
    output_ += printed;
    return status_;
  }
  int run(std::vector<std::string> argv, std::initializer_list<std::string> more) {
    argv.insert(argv.end(), more);
    return run(argv, dir_);
  }
  RunCompiler runner() {
    return [this](const std::vector<std::string>& argv, const fs::path& cwd) { return run(argv, cwd); };
  }
  int status() const { return status_; }
  const std::string& output() const { return output_; }
  void forget_output() { output_.clear(); }  // a failed attempt that another replaces

 private:
  fs::path dir_;
  const ModuleOptions& o_;
  int status_ = 0;
  std::string output_, log_;
};

// The host side (bridge and reference) is the same in every flavour of a kernel's module (plain,
// race-instrumented, counted, any variant set): one object per compiler, flags and sources, in
// <cache>/host/, compiled in the first module's directory.
fs::path host_object(const ir::Kernel& kernel, const support::OutputSet& files, const fs::path& dir, const fs::path& shim,
                     std::vector<std::string> compile, const ModuleOptions& o, ModuleCompiler& compiler) {
  std::string key = compiler_identity(o) + "\n";
  for (const auto& f : compile) key += f + "\n";
  key += files_key(files, [&](const std::string& path) {
    const bool kernel_side = path == emit::sim_launcher_path(kernel) || path.ends_with(".metal") ||
                             path == "loop_form_revision" || path == kRunsEntries || path.starts_with(emit::kSourceObjectDir);
    return !kernel_side;
  });
  // Absolute: the link runs in the module's directory, and the cache directory may be relative.
  const fs::path object = fs::absolute(cache_dir(o)) / "host" / (kernel.name + "-" + support::hash_hex(key) + ".o");
  if (fs::exists(object)) return object;
  CacheLock lock(object);
  if (fs::exists(object)) return object;
  const std::string tmp = fmt::format("host.tmp.{}.o", ::getpid());
  compile.insert(compile.end(), {kHostOptimization, "-Winvalid-pch"});
  compile = with_precompiled_prelude(compile, PreludeKind::host, shim, compiler_identity(o), compiler.runner());
  if (compiler.run(compile, {"-c", kHostUnit, "-o", tmp}) == 0) fs::rename(dir / tmp, object);
  std::error_code ignored;
  fs::remove(dir / tmp, ignored);
  return object;
}

fs::path source_kernel_object(const ir::Kernel& kernel, const support::OutputSet& every_launcher,
                              const std::vector<std::string>& flags, const fs::path& module_dir, const ModuleOptions& o,
                              ModuleCompiler& compiler);

// `keyed`: the module's sources as its key sees them (SimModule), for the host object's key.
// `object`: a hand-written kernel's object sources for every launcher (SimModule::object_sources).
void compile(const ir::Kernel& kernel, const support::OutputSet& keyed, const support::OutputSet& object,
             const fs::path& dir, const fs::path& target, const ModuleOptions& o) {
  fs::path tmp = target;
  tmp += fmt::format(".tmp.{}", ::getpid());
  const fs::path shim = shared_shim(cache_dir(o));
  std::vector<std::string> cxx = words(o.compiler);
  for (const auto& f : words(kFlags)) cxx.push_back(f);
  for (const std::string& d : {shim.string(), std::string(".")}) cxx.insert(cxx.end(), {"-I", d});
  ModuleCompiler compiler(dir, o);
  // What private variables hold before they are written is the kernel's question: the host side is
  // one object for both fills.
  std::vector<std::string> host_cxx = cxx;
  host_cxx.push_back(private_init_flag(ModuleOptions{}));
  const fs::path host = host_object(kernel, keyed, dir, shim, host_cxx, o, compiler);
  cxx.push_back(private_init_flag(o));
  // The launchers (which include the kernel) in an object file of their own, linked apart:
  // linking with -fsanitize=thread would pull in libtsan.
  std::string launcher = fmt::format("launcher.tmp.{}.o", ::getpid());
  std::vector<std::string> unit = cxx;
  for (const auto& f : words(instrumentation(o))) unit.push_back(f);
  unit.insert(unit.end(), {kKernelOptimization, "-Winvalid-pch"});
  if (compiler.status() == 0 && kernel.is_source()) {
    launcher = source_kernel_object(kernel, object, unit, dir, o, compiler).string();  // cached: not removed
  } else if (compiler.status() == 0) {
    unit = with_precompiled_prelude(unit, PreludeKind::kernel, shim, compiler_identity(o), compiler.runner());
    compiler.run(unit, {"-c", emit::sim_launcher_path(kernel), "-o", launcher});
  }
  if (compiler.status() == 0) {
    std::vector<std::string> link = cxx;
    for (const auto& f : words(kLinkFlags)) link.push_back(f);
    compiler.run(link, {"-shared", launcher, host.string(), "-o", fs::absolute(tmp).string()});
  }
  std::error_code ignored;
  if (!kernel.is_source()) fs::remove(dir / launcher, ignored);
  if (compiler.status() != 0) {
    fs::remove(tmp, ignored);
    throw std::runtime_error(
        fmt::format("compiling the simulator module failed:\n{}", with_header_lines(kernel, compiler.output())));
  }
  fs::rename(tmp, target);
}

}  // namespace

std::string run_program(const std::vector<std::string>& argv, const fs::path& cwd, int& status, double timeout_seconds) {
  return run_and_capture(argv, cwd, status, timeout_seconds);
}

fs::path default_cache_dir() {
  if (const char* d = std::getenv("MTLGEN_CACHE_DIR"); d && *d) return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return fs::path(d) / "mtlgen";
  if (const char* d = std::getenv("HOME"); d && *d) return fs::path(d) / ".cache" / "mtlgen";
  return fs::temp_directory_path() / "mtlgen-cache";
}


fs::path cache_dir(const ModuleOptions& options) {
  return options.cache_dir.empty() ? default_cache_dir() : options.cache_dir;
}

std::string spec_line_note(const ir::Kernel& k, const std::string& msl, int line) {
  if (k.is_source()) {  // the simulator keeps its lines; a header's are numbered apart (msl_unit.h)
    std::vector<std::string> headers;
    for (const auto& [key, text] : k.source->simulator_headers) headers.push_back(text);
    if (auto in_header = msl::header_line_of(line, headers))
      return fmt::format(" ({}:{})", in_header->path, in_header->line);
    return fmt::format(" ({}:{})", k.source->file, line);
  }
  auto at = emit::spec_location(msl, emit::msl_blocks(k), line);
  return at ? fmt::format(" ({}:{})", k.spec_path, at->line) : "";
}

std::string with_spec_lines(const ir::Kernel& k, const std::string& msl, const std::string& message) {
  std::string out;
  size_t pos = 0;
  for (size_t at; (at = message.find("line ", pos)) != std::string::npos;) {
    size_t end = at + 5;
    while (end < message.size() && std::isdigit(static_cast<unsigned char>(message[end]))) ++end;
    if (end == at + 5) {
      out += message.substr(pos, end - pos);
    } else {  // a header's line shows as its own (the note names the header)
      const int line = std::stoi(message.substr(at + 5, end - at - 5));
      out += message.substr(pos, at + 5 - pos) + std::to_string(line % msl::kHeaderLineStride) + spec_line_note(k, msl, line);
    }
    pos = end;
  }
  return out + message.substr(pos);
}


namespace {

// Refuses spec code that would make the compiler read files of the host (include_policy.h).
void check_includes(const ir::Kernel& k) {
  std::string error;
  auto check = [&](const std::string& text, const std::string& file, int line, int column = 1) {
    if (error.empty()) error = support::include_violation(text, file, line, column);
  };
  if (k.is_source()) {
    check(k.source->simulator_text, k.source->file, 1);
    fs::path dir = fs::path(k.source->file).parent_path();
    for (const auto& [name, text] : k.source->simulator_headers) check(text, (dir / name).string(), 1);
  } else {
    check(k.body.text, k.body.loc.file.empty() ? k.spec_path : k.body.loc.file, k.body.loc.line, k.body.loc.column);
  }
  check(k.reference.text, k.reference.loc.file.empty() ? k.spec_path : k.reference.loc.file, k.reference.loc.line,
        k.reference.loc.column);
  const ir::CodeBlock& included = k.reference_include.code;
  check(included.text, included.loc.file, included.loc.line, included.loc.column);
  if (!error.empty()) throw RefusedSpecCode(error);
}

// loop_form.txt's line for each kernel function of `forms` (made of `file` and the headers it
// includes): whether it runs as loops, and why not.
std::string loop_form_notes(const std::string& label, const std::vector<ir::LoopFormKernel>& forms,
                            const std::string& file) {
  std::string notes;
  for (const ir::LoopFormKernel& k : forms)
    notes += k.refusal.empty() ? fmt::format("{}: `{}` runs as loops{}\n", label, k.function,
                                             k.header.empty() ? "" : " (defined in " + k.header + ")")
                               : fmt::format("{}: `{}` runs as fibers: {} (line {} of {})\n", label, k.function,
                                             k.refusal, k.refusal_line, k.header.empty() ? file : k.header);
  return notes;
}

void write_loop_form_notes(const fs::path& notes_file, const std::string& notes, const ModuleOptions& o) {
  std::ofstream(notes_file) << notes;
  if (o.verbose) fmt::print(stderr, "{}", notes);
}

bool any_loop_form(const std::vector<ir::LoopFormKernel>& forms) {
  return std::any_of(forms.begin(), forms.end(), [](const ir::LoopFormKernel& k) { return !k.text.empty(); });
}

// A generated kernel's .metal with the front end's loop forms inserted, and why a kernel has none
// (loop_form.txt).
struct LoopFormNotes {
  std::string metal;  // the .metal with the forms (ir::with_loop_forms); empty: none
  std::string notes;  // a line per kernel function
};

// What a loop form is made from: the simulator's copy of a generated .metal, the entry points
// whose kernels get one (empty: all), `label` to start the notes' lines, and `read`, the files
// the parse reads (the key of the cached form).
struct LoopFormSource {
  fs::path metal;
  std::set<std::string> entry_points;
  std::string label;
  std::string read;
};

// Without a loop form where the front end cannot read the file (the notes say why).
std::optional<LoopFormNotes> parse_loop_form(const LoopFormSource& source) {
  msl::ParseOptions po;
  po.file = source.metal;
  po.conformance = false;
  if (!source.entry_points.empty()) po.loop_form_entry_points = source.entry_points;
  support::Diagnostics diags;
  msl::Unit unit = msl::parse(po, diags);
  if (diags.error_count() != 0) {  // the kernels run as fibers; the first error says why
    const support::Diagnostic& e = *std::find_if(diags.all().begin(), diags.all().end(), [](const support::Diagnostic& d) {
      return d.severity == support::Severity::error;
    });
    return LoopFormNotes{"", fmt::format("{}: no loop form, every kernel function runs as fibers: the front end "
                                         "cannot read the simulator's copy ({}:{}: {})\n",
                                         source.label, fs::path(e.loc.file).filename().string(), e.loc.line, e.message)};
  }
  const std::vector<ir::LoopFormKernel>& forms = unit.loop_form().kernels;
  return LoopFormNotes{any_loop_form(forms) ? ir::with_loop_forms(unit.text(), forms) : "",
                       loop_form_notes(source.label, forms, source.metal.filename().string())};
}

// The loop form is the same in every build of a kernel (plain, race-instrumented, counted,
// zeroed): parsed once per file and entry points, kept in <cache>/loop_form/ (a libclang parse is
// most of a small module's build after g++).
std::optional<LoopFormNotes> cached_loop_form(const LoopFormSource& source, const ModuleOptions& o) {
  std::string key = std::string(msl::LoopForm::revision()) + "\n";
  for (const std::string& e : source.entry_points) key += e + ",";
  key += source.read;
  const fs::path at = fs::absolute(cache_dir(o)) / "loop_form" / (source.label + "-" + support::hash_hex(key));
  const fs::path metal = fs::path(at) += ".metal", notes = fs::path(at) += ".txt";
  if (fs::exists(notes)) return LoopFormNotes{support::read_file(metal).value_or(""), support::read_file(notes).value_or("")};
  std::optional<LoopFormNotes> parsed = parse_loop_form(source);
  if (!parsed) return parsed;
  support::OutputSet out;
  out.add(metal.filename().string(), parsed->metal);
  out.add(notes.filename().string(), parsed->notes);  // written after the .metal (path order): it says both are there
  support::write_outputs(out, at.parent_path());
  return parsed;
}

// The loop form (msl/msl_loop_rewrite.cpp), inserted into the simulator's copy of a generated
// .metal once it is written: the launchers' group entry points compile only where the front end
// made one. Which kernel functions run as loops, and why the others do not, goes to `notes_file`
// (and to stderr with ModuleOptions::verbose).
bool insert_loop_form(const LoopFormSource& source, const fs::path& notes_file, const ModuleOptions& o) {
  std::optional<LoopFormNotes> form = cached_loop_form(source, o);
  if (!form) return false;
  write_loop_form_notes(notes_file, form->notes, o);
  if (form->metal.empty()) return false;
  std::ofstream(source.metal, std::ios::binary) << form->metal;
  return true;
}

// A generated kernel's loop form: its .metal under the module's sim directory.
LoopFormSource generated_loop_form(const ir::Kernel& kernel, const support::OutputSet& files, const fs::path& dir,
                                   const ModuleOptions& o) {
  const std::string metal = emit::sim_dir(kernel) + kernel.name + ".metal";
  return {dir / metal, o.entry_points, kernel.name, files_key(files, [&](const std::string& p) { return p == metal; })};
}

// A loop form g++ refuses (a construct the rewrite mishandles) must not cost the kernel its
// verification: the module is compiled again without it, and the kernel runs as fibers.
void compile_with_loop_form(const ir::Kernel& kernel, const support::OutputSet& files, const support::OutputSet& keyed,
                            const support::OutputSet& object, const fs::path& dir, const fs::path& target,
                            const ModuleOptions& o) {
  if (kernel.is_family() || kernel.is_source() ||
      !insert_loop_form(generated_loop_form(kernel, files, dir, o), dir / "loop_form.txt", o))
    return compile(kernel, keyed, object, dir, target, o);
  try {
    compile(kernel, keyed, object, dir, target, o);
  } catch (const std::runtime_error& e) {
    support::write_outputs(files, dir);
    std::ofstream(dir / "loop_form.txt", std::ios::app)
        << kernel.name << ": the loop form did not compile, every kernel function runs as fibers:\n" << e.what() << "\n";
    compile(kernel, keyed, object, dir, target, o);
  }
}

// A hand-written kernel's object sources for `launchers` (emit_sim_source_object, their loop forms inserted).
support::OutputSet object_sources(const ir::Kernel& kernel, const std::vector<ir::SourceLauncher>& launchers) {
  support::OutputSet files;
  emit::emit_sim_source_object(kernel, launchers, emit::launched_loop_forms(kernel, launchers), files);
  return files;
}

// Whether a kernel object whose loop forms g++ refuses is compiled again without them (its kernels
// then run as fibers), or refused (Forms::only).
enum class Forms { then_without, only };

// Compiles a hand-written kernel's object for `launchers` (`files`: object_sources of them) in
// <cache>/kernel/<file>-<key>/, keyed by its sources and flags alone; nullopt where g++ refused it
// (`refusal` then keeps its output there, so that the same object is not tried again;
// `form_refusal` where it refused the loop forms, so that they are not tried again either).
std::optional<fs::path> kernel_object_of(const ir::Kernel& kernel, const std::vector<ir::SourceLauncher>& launchers,
                                         const support::OutputSet& files, const std::vector<std::string>& flags,
                                         const ModuleOptions& o, ModuleCompiler& compiler, bool remember_refusal,
                                         Forms mode) {
  const std::vector<ir::LoopFormKernel> forms = emit::launched_loop_forms(kernel, launchers);
  const std::string file = emit::source_object_file_name(kernel), launcher = emit::source_object_launcher_path();
  std::string key = compiler_identity(o) + "\n" + msl::LoopForm::revision() + "\n" + shim_hash() + "\n";
  for (const auto& f : flags) key += f + "\n";
  key += files_key(files, [](const std::string&) { return true; });
  const fs::path at = fs::absolute(cache_dir(o)) / "kernel" / (fs::path(file).stem().string() + "-" + support::hash_hex(key));
  const fs::path object = at / "kernel.o", refusal = at / "refused.log", form_refusal = at / "refused_loop_forms.log";
  const bool with_form = any_loop_form(forms);
  auto built = [&]() -> std::optional<std::optional<fs::path>> {
    if (fs::exists(object)) return std::optional<fs::path>(object);
    if (remember_refusal && fs::exists(refusal)) return std::optional<fs::path>();
    if (mode == Forms::only && with_form && fs::exists(form_refusal)) return std::optional<fs::path>();
    return std::nullopt;
  };
  if (auto done = built()) return *done;
  CacheLock lock(at);
  if (auto done = built()) return *done;
  support::write_outputs(files, at);
  write_loop_form_notes(at / "loop_form.txt", loop_form_notes(file, forms, file), o);
  std::vector<std::string> unit = with_precompiled_prelude(flags, PreludeKind::kernel, shared_shim(cache_dir(o)),
                                                           compiler_identity(o), compiler.runner());
  unit.insert(unit.end(), {"-I", emit::kSourceObjectDir, "-c", launcher, "-o", "kernel.tmp.o"});
  const bool forms_refused = with_form && fs::exists(form_refusal);  // by a Forms::only try
  if ((forms_refused || compiler.run(unit, at) != 0) && with_form) {  // a loop form g++ refuses
    std::string why = compiler.output();
    if (forms_refused) {
      std::ifstream in(form_refusal);
      why.assign(std::istreambuf_iterator<char>(in), {});
    }
    compiler.forget_output();
    if (mode == Forms::only) {
      if (!forms_refused) std::ofstream(form_refusal) << why;
      return std::nullopt;
    }
    support::OutputSet plain;  // the kernels run as fibers
    emit::emit_sim_source_object(kernel, launchers, {}, plain);
    support::write_outputs(plain, at);
    std::ofstream(at / "loop_form.txt", std::ios::app)
        << file << ": the loop form did not compile, every kernel function runs as fibers:\n" << why << "\n";
    compiler.run(unit, at);
  }
  if (compiler.status() == 0) {
    fs::rename(at / "kernel.tmp.o", object);
    return object;
  }
  if (remember_refusal) std::ofstream(refusal) << compiler.output();
  return std::nullopt;
}

// A hand-written kernel's launchers and file (emit_sim_source_object) as one object, which every
// spec and kernel of the file links: every entry point of a small file (SourceKernel::launchers),
// or, where one of those does not compile (or the file is large), the entries this module runs.
// The loop forms first: where g++ refuses those of every entry point (a form's check that fails in
// an instantiation this module does not run: MLX's softmax.h, whose bfloat16_t instantiations call
// bf16_math.h's simd_max), the entries this module runs with their forms, and only then every
// entry point without forms, then the module's own without. Empty where g++ refused those too
// (compiler.output() says why). `every_launcher`: object_sources of all the file's launchers, as
// SimModule rendered them for its key.
fs::path source_kernel_object(const ir::Kernel& kernel, const support::OutputSet& every_launcher,
                              const std::vector<std::string>& flags, const fs::path& module_dir, const ModuleOptions& o,
                              ModuleCompiler& compiler) {
  std::set<std::string> runs;
  for (const auto& v : kernel.variants)
    if (o.entry_points.empty() || o.entry_points.count(v.entry_point)) runs.insert(v.source_host_name);
  const std::vector<ir::SourceLauncher>& all = kernel.source->launchers;
  std::vector<ir::SourceLauncher> own;
  std::copy_if(all.begin(), all.end(), std::back_inserter(own), [&](const ir::SourceLauncher& l) { return runs.count(l.host_name); });
  std::optional<fs::path> object;
  if (own.size() < all.size() && all.size() > runs.size()) {
    object = kernel_object_of(kernel, all, every_launcher, flags, o, compiler, true, Forms::only);
    if (!object) compiler.forget_output();
    if (!object && any_loop_form(emit::launched_loop_forms(kernel, own)))
      object = kernel_object_of(kernel, own, object_sources(kernel, own), flags, o, compiler, false, Forms::only);
    if (!object) object = kernel_object_of(kernel, all, every_launcher, flags, o, compiler, true, Forms::then_without);
    if (!object) compiler.forget_output();
  }
  if (!object && own.size() == all.size())
    object = kernel_object_of(kernel, all, every_launcher, flags, o, compiler, false, Forms::then_without);
  else if (!object) object = kernel_object_of(kernel, own, object_sources(kernel, own), flags, o, compiler, false, Forms::then_without);
  if (!object) return {};
  std::error_code ignored;
  fs::copy_file(object->parent_path() / "loop_form.txt", module_dir / "loop_form.txt", fs::copy_options::overwrite_existing, ignored);
  return *object;
}

}  // namespace

namespace {

// The kernel as if it came from no particular spec file. Its path and hash (and its included
// file's path) reach the module's sources only in comments (banners, `// reference: <spec>:<line>`),
// so the key leaves them out: a copy of a spec with one kernel changed (a planted bug in one member
// of a family) must not recompile the others, nor should a moved spec.
ir::Kernel anonymous(const ir::Kernel& k) {
  ir::Kernel a = k;
  a.spec_path = "spec.yaml";
  a.spec_hash.clear();
  if (k.reference_include.present()) a.reference_include.code.loc.file = "spec.inc";
  if (k.family) {
    auto family = std::make_shared<ir::Family>(*k.family);
    for (ir::Kernel& m : family->kernels) m = anonymous(m);
    a.family = std::move(family);
  }
  return a;
}

}  // namespace

SimModule::SimModule(const ir::Kernel& kernel, const ModuleOptions& options) {
  check_includes(kernel);
  support::OutputSet keyed = module_sources(anonymous(kernel), options.entry_points);
  keyed.add("loop_form_revision", msl::LoopForm::revision());
  support::OutputSet object;  // rendered once: in the key, and compiled where the module is not cached
  if (kernel.is_source()) {  // the kernel object's sources, and which of its entries this module runs
    object = object_sources(kernel, kernel.source->launchers);
    for (const auto& [path, text] : object.files()) keyed.add(path, text);
    keyed.add(kRunsEntries, fmt::format("{}", fmt::join(options.entry_points, ",")));
  }
  fs::path cache = cache_dir(options);
  fs::path dir = cache / "sim" /
                fmt::format("{}-{}{}{}{}", kernel.name, options.race_instrumented ? "races-" : "",
                            options.access_counted ? "counted-" : "",
                            options.private_init == ModuleOptions::PrivateInit::zero ? "zeroed-" : "",
                            module_key(keyed, options));
  path_ = fs::absolute(dir / (kernel.name + ".so"));  // absolute: race reports find it by dladdr()
  cached_ = fs::exists(path_);
  if (cached_) return;
  // Processes building the same module (CTest runs tests at once; verify --jobs in two shells)
  // take turns: the sources are written, the loop form appended and compiled in place.
  CacheLock lock(dir);
  cached_ = fs::exists(path_);
  if (cached_) return;
  // The sources as compiled name the spec (banners, `// reference:` lines): rendered only to build.
  support::OutputSet files = module_sources(kernel, options.entry_points);
  files.add("loop_form_revision", msl::LoopForm::revision());
  support::write_outputs(files, dir);
  compile_with_loop_form(kernel, files, keyed, object, dir, path_, options);
}

LoadedModule::LoadedModule(const fs::path& path) {
  handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) throw std::runtime_error(fmt::format("cannot load {}: {}", path.string(), ::dlerror()));
}

LoadedModule::~LoadedModule() {
  if (handle_) ::dlclose(handle_);
}

mtlsim::KernelGroupFn LoadedModule::group_fn(const ir::Variant& v) const {
  return reinterpret_cast<mtlsim::KernelGroupFn>(::dlsym(handle_, emit::group_symbol(v).c_str()));
}

mtlsim::KernelThreadFn LoadedModule::thread_fn(const ir::Variant& v) const {
  void* f = ::dlsym(handle_, launcher_symbol(v).c_str());
  if (!f) throw std::runtime_error("simulator module lacks entry point " + v.entry_point);
  return reinterpret_cast<mtlsim::KernelThreadFn>(f);
}

void LoadedModule::set_function_constants(const ir::Kernel& kernel, const std::vector<double>& values) const {
  void* f = ::dlsym(handle_, "mtlsim_set_function_constants");
  if (!f) throw std::runtime_error("simulator module lacks mtlsim_set_function_constants");
  auto set = reinterpret_cast<FunctionConstantsFn>(f);
  if (!kernel.is_source()) return set(values.data());
  std::vector<double> by_index(1, 0.0);
  for (size_t i = 0; i < kernel.function_constants.size() && i < values.size(); ++i) {
    const auto index = static_cast<size_t>(kernel.function_constants[i].index);
    if (by_index.size() <= index) by_index.resize(index + 1, 0.0);
    by_index[index] = values[i];
  }
  set(by_index.data());
}

MtlsimHostDispatchFn LoadedModule::host_dispatch_fn() const {
  void* f = ::dlsym(handle_, "mtlsim_host_dispatch");
  if (!f) throw std::runtime_error("simulator module lacks mtlsim_host_dispatch");
  return reinterpret_cast<MtlsimHostDispatchFn>(f);
}

ReferenceFn LoadedModule::reference_fn(const std::string& symbol) const {
  void* f = ::dlsym(handle_, ("mtlsim_reference_" + symbol).c_str());
  if (!f) throw std::runtime_error("simulator module lacks reference " + symbol);
  return reinterpret_cast<ReferenceFn>(f);
}

}  // namespace mtlgen::verify
