// start_case() and poll_case(): a case in a sandboxed child process, and what the parent makes of
// what it sent (verify/case_runner.h).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <limits>

#include "verify/case_phase.h"
#include "verify/case_runner.h"
#include "verify/family_runner.h"
#include "verify/guarded_buffer.h"
#include "verify/sandbox.h"

namespace mtlgen::verify {

// ---- isolation in a child process ----

namespace {

// The report channel. Spec code shares the child's address space and can write to any of its
// file descriptors, so a frame only counts when it opens with the case's nonce (random per case,
// made by the parent) and holds exactly one well-formed report; anything else the parent sees
// there (a forged PASS, `{not json`, stray output) makes the case an ERROR, never a PASS.
int g_report_fd = -1;
const char* g_entry_point = "";
char g_nonce[40] = "";
constexpr int kExitCalled = 126;  // the child's status after reporting an exit() or terminate()

// Writes "<nonce>\n<text>" in one write (async-signal-safe; for short messages).
void send_frame(const char* text, size_t size) {
  char frame[2048];
  size_t head = std::strlen(g_nonce);
  size = std::min(size, sizeof frame - head - 1);
  std::memcpy(frame, g_nonce, head);
  frame[head] = '\n';
  std::memcpy(frame + head + 1, text, size);
  (void)!::write(g_report_fd, frame, head + 1 + size);
}

// "thread 3 of threadgroup (0, 0, 0)" inside a kernel thread, else what the child was doing.
void describe_thread(char* out, size_t size) {
  if (const auto* tc = mtlsim::current_thread_context()) {
    std::snprintf(out, size, "thread %u of threadgroup (%u, %u, %u)", tc->thread_index_in_threadgroup,
                  tc->threadgroup_position_in_grid.x, tc->threadgroup_position_in_grid.y,
                  tc->threadgroup_position_in_grid.z);
  } else {
    std::snprintf(out, size, "code outside any kernel thread %s", case_phase());
  }
}

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

// A fault outside every buffer whose registers hold -ftrivial-auto-var-init=pattern's bytes: the
// address was made from a private variable the thread never wrote (a pointer of 0xFE bytes, give
// or take an offset, or an index 0xFEFEFEFE).
const char* private_pattern_hint(int sig, const void* context) {
#if defined(__x86_64__)
  if (sig != SIGSEGV) return "";
  const greg_t* regs = static_cast<const ucontext_t*>(context)->uc_mcontext.gregs;
  for (int r : {REG_RAX, REG_RBX, REG_RCX, REG_RDX, REG_RSI, REG_RDI, REG_RBP, REG_R8, REG_R9, REG_R10, REG_R11,
                REG_R12, REG_R13, REG_R14, REG_R15}) {
    const auto v = static_cast<uint64_t>(regs[r]);
    if (v >> 24 == 0xFEFEFEFEFEull || uint32_t(v) == 0xFEFEFEFEu)
      return "; a register holds 0xFEFEFEFE, the simulator's fill of uninitialised private memory: the address was "
             "most likely made from a private (thread) variable read before it was written (a GPU leaves whatever "
             "its registers held there); initialise it, or write it on every path";
  }
#else
  (void)sig, (void)context;
#endif
  return "";
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
  bool known = (sig == SIGSEGV || sig == SIGBUS) &&
               (describe_fault(address, where, sizeof where) ||
                mtlsim::describe_threadgroup_address(address, where, sizeof where));
  char thread[512];
  describe_thread(thread, sizeof thread);
  char message[1200];
  int n = known ? std::snprintf(message, sizeof message, "CRASH out-of-bounds %s of %s, by %s of %s", is_write ? "write" : "read",
                                where, thread, g_entry_point)
          : sig == SIGABRT  // si_addr holds no address here
              ? std::snprintf(message, sizeof message, "CRASH SIGABRT: abort() was called (or an assert failed) in %s of %s",
                              thread, g_entry_point)
              : std::snprintf(message, sizeof message, "CRASH %s at address %p%s%s in %s of %s", signal_name(sig),
                              info->si_addr, fault_hint(sig, info), private_pattern_hint(sig, context), thread,
                              g_entry_point);
#if defined(__x86_64__)
  if (n > 0 && n < static_cast<int>(sizeof message)) {  // the faulting instruction, for its source line
    auto pc = static_cast<uintptr_t>(static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_RIP]);
    n += describe_fault_pc(pc, message + n, sizeof message - static_cast<size_t>(n));
  }
#endif
  if (n > 0) send_frame(message, static_cast<size_t>(std::min<int>(n, sizeof message - 1)));
  ::_exit(128 + sig);
}

// The sandbox trapped a system call (sandbox.h): name it and what it was for.
void on_forbidden_call(int, siginfo_t* info, void*) {
  const char* name = sandbox::trapped_name(info->si_syscall);
  char thread[512];
  describe_thread(thread, sizeof thread);
  char message[1200];
  int n = std::snprintf(message, sizeof message,
                        "CRASH the sandbox stopped a forbidden system call: %s (%s) by %s of %s. Spec code may not "
                        "start programs or processes, write files, use the network or touch other processes",
                        name ? name : "?", name ? sandbox::purpose(name) : "unknown", thread, g_entry_point);
  if (n > 0) send_frame(message, static_cast<size_t>(std::min<int>(n, sizeof message - 1)));
  ::_exit(128 + SIGSYS);
}

}  // namespace
}  // namespace mtlgen::verify

// exit() from spec code: modules are linked with --wrap=exit (sim_module.cpp), so it lands here
// before any exit handler or thread-local destructor runs; say so and end the child.
extern "C" [[noreturn]] void __wrap_exit(int status) {
  using namespace mtlgen::verify;
  if (g_report_fd < 0) ::exit(status);  // not in a case's child (modules load nowhere else)
  char thread[512];
  describe_thread(thread, sizeof thread);
  char message[1200];
  int n = std::snprintf(message, sizeof message,
                        "CRASH the case called exit(%d), by %s of %s: kernels, references and constructors must "
                        "return, never end the process",
                        status, thread, g_entry_point);
  if (n > 0) send_frame(message, static_cast<size_t>(std::min<int>(n, sizeof message - 1)));
  ::_exit(kExitCalled);
}

namespace mtlgen::verify {
namespace {

[[noreturn]] void on_terminate() {
  std::string what = "std::terminate() was called without an active exception";
  if (auto e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      what = fmt::format("uncaught C++ exception: {}", x.what());
    } catch (...) {
      what = "uncaught C++ exception of a type not derived from std::exception";
    }
  }
  char thread[512];
  describe_thread(thread, sizeof thread);
  std::string message = fmt::format("CRASH {}, by {} of {}", what, thread, g_entry_point);
  send_frame(message.data(), message.size());
  ::_exit(kExitCalled);
}

// Shortly before the parent's watchdog fires: say where the stuck kernel thread is (its thread and
// the instruction it was running, which the parent turns into a line), then end the case.
void on_hang(int, siginfo_t*, void* context) {
  char thread[512];
  describe_thread(thread, sizeof thread);
  char message[1400];
  int n = std::snprintf(message, sizeof message, "HANG %s of %s was still running", thread, g_entry_point);
#if defined(__x86_64__)
  if (n > 0 && n < static_cast<int>(sizeof message)) {
    const auto& regs = static_cast<ucontext_t*>(context)->uc_mcontext.gregs;
    const auto pc = static_cast<uintptr_t>(regs[REG_RIP]);
    n += describe_fault_pc(pc, message + n, sizeof message - static_cast<size_t>(n));
    // Stopped in the runtime (a race-detector hook) or in a PLT stub on the way there (in the
    // object, but no line): the kernel's call is on the stack, below the running fiber's top (the
    // words above it are the next stack's guard page). Its return address is the second candidate.
    const auto sp = static_cast<uintptr_t>(regs[REG_RSP]);
    const uintptr_t top = mtlsim::current_stack_top();
    const size_t words = top > sp ? std::min<size_t>((top - sp) / sizeof(uintptr_t), 2048) : 16;
    const uintptr_t caller = kernel_return_address(reinterpret_cast<const uintptr_t*>(sp), words);
    if (caller && caller != pc && n < static_cast<int>(sizeof message))
      n += describe_fault_pc(caller, message + n, sizeof message - static_cast<size_t>(n));
  }
#else
  (void)context;
#endif
  if (n > 0) send_frame(message, static_cast<size_t>(std::min<int>(n, sizeof message - 1)));
  ::_exit(kExitCalled);
}

// At 90% of the watchdog, so that the report arrives before the parent kills the case.
void arm_hang_report(double watchdog_seconds) {
  struct sigaction sa{};
  sa.sa_sigaction = on_hang;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  ::sigaction(SIGALRM, &sa, nullptr);
  const double at = watchdog_seconds * 0.9;
  itimerval timer{};
  timer.it_value.tv_sec = static_cast<time_t>(at);
  timer.it_value.tv_usec = static_cast<suseconds_t>((at - static_cast<double>(timer.it_value.tv_sec)) * 1e6);
  ::setitimer(ITIMER_REAL, &timer, nullptr);
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
  sa.sa_sigaction = on_forbidden_call;
  ::sigaction(SIGSYS, &sa, nullptr);
}

CaseResult failure(CaseStatus status, std::string checker, std::string message) {
  CaseResult r;
  r.status = status;
  r.problems.push_back({std::move(checker), std::move(message)});
  return r;
}

void send_report(const CaseResult& result) {
  std::string json = to_json(result).dump();
  std::string frame = fmt::format("{}\nREPORT {}\n{}", g_nonce, json.size(), json);
  size_t done = 0;
  while (done < frame.size()) {
    ssize_t n = ::write(g_report_fd, frame.data() + done, frame.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
}

// stdin from /dev/null, stdout and stderr into `output`, the report channel at fd 3; every other
// descriptor the parent had (other cases' channels among them) closed.
bool set_up_descriptors(int report, int output) {
  int null = ::open("/dev/null", O_RDONLY);
  if (null < 0 || ::dup2(null, 0) < 0 || ::dup2(output, 1) < 0 || ::dup2(output, 2) < 0 || ::dup2(report, 3) < 0) {
    return false;
  }
  g_report_fd = 3;
  return ::close_range(4, ~0u, 0) == 0;
}

// Order matters: the sandbox is in place before the module (spec code) is loaded; the line
// helper is forked before the sandbox forbids processes. The module is never unloaded: its
// destructors are spec code too, and the report is out by then.
[[noreturn]] void child_main(const CaseRequest& request, int report, int output, double watchdog_seconds) {
  ::setpgid(0, 0);
  if (!set_up_descriptors(report, output)) ::_exit(kExitCalled);
  g_entry_point = request.variant->entry_point.c_str();
  install_crash_handlers();
  arm_hang_report(watchdog_seconds);
  std::set_terminate(on_terminate);
  sandbox::LineHelper helper;
  if (request.exact_races) helper = sandbox::start_line_helper(request.module->path().string());
  std::string refused = sandbox::enter(sandbox::limits_for(watchdog_seconds, request.workers));
  if (!refused.empty()) {
    send_report(failure(CaseStatus::error, "error", "the case was not run: " + refused));
    ::_exit(0);
  }
  sandbox::use_line_helper(helper);
  CaseResult result;
  try {
    enter_module_load();
    const auto* module = new LoadedModule(request.module->path());
    if (request.kernel->is_family()) {
      auto* members = new std::vector<std::unique_ptr<LoadedModule>>;
      for (const auto* m : request.member_modules) members->push_back(std::make_unique<LoadedModule>(m->path()));
      result = run_family_case(request, *module, *members);
    } else {
      result = run_case(request, *module);
    }
  } catch (const std::exception& e) {
    result = failure(CaseStatus::error, "error", e.what());
  }
  send_report(result);
  ::_exit(0);
}

std::string random_nonce() {
  uint8_t bytes[16];
  if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) {
    throw std::runtime_error("getrandom() failed");
  }
  std::string hex;
  for (uint8_t b : bytes) hex += fmt::format("{:02x}", b);
  return "MTLGEN " + hex;
}

// ---- judging what the child sent ----

constexpr size_t kMaxReport = 64u << 20;  // a larger report is an ERROR, not an allocation
constexpr size_t kOutputKept = 2000;      // bytes of the child's stdout/stderr shown with a failure

// The child's text made safe for a terminal: control characters escaped, length capped.
std::string printable(const std::string& text, size_t limit = 8000) {
  std::string out;
  for (size_t i = 0; i < text.size() && out.size() < limit; ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) out += fmt::format("\\x{:02x}", c);
    else out += static_cast<char>(c);
  }
  if (out.size() >= limit) out += "...";
  return out;
}

void make_printable(CaseResult& r) {
  for (auto& p : r.problems) {
    p.checker = printable(p.checker, 100);
    p.message = printable(p.message);
  }
  for (auto& o : r.outputs) o.buffer = printable(o.buffer, 100);
}

std::string exit_description(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (!WIFSIGNALED(status)) return "ended";
  int sig = WTERMSIG(status);
  std::string name = fmt::format("was killed by SIG{} ({})", sigabbrev_np(sig) ? sigabbrev_np(sig) : "?", strsignal(sig));
  if (sig == SIGSYS) {
    name += ": a system call the sandbox forbids, made with signals blocked (as system() and posix_spawn() make "
            "theirs: starting a program), so the sandbox could not name it";
  }
  if (sig == SIGXCPU || sig == SIGKILL) name += ": past its CPU time limit, or out of memory";
  return name;
}

CaseResult no_report(int status) {
  bool clean_exit = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return failure(CaseStatus::crash, "crash",
                 fmt::format("the case's process {} without a report{}", exit_description(status),
                             clean_exit ? ": spec code ended it (_exit(), quick_exit()) or closed mtlgen's report channel"
                                        : ""));
}

CaseResult tampered(const std::string& text) {
  return failure(CaseStatus::error, "error",
                 fmt::format("the case's report channel held {} bytes that are not mtlgen's report (spec code wrote "
                             "to a file descriptor it does not own?), starting: {}",
                             text.size(), printable(text.substr(0, 120), 200)));
}

// "<nonce>\nREPORT <size>\n<json>", validated field by field.
CaseResult parse_report(const std::string& frame, int status) {
  size_t newline = frame.find('\n');
  size_t size = 0;
  const char* digits = frame.c_str() + 7;
  auto [end, ec] = std::from_chars(digits, frame.c_str() + std::min(newline, frame.size()), size);
  if (newline == std::string::npos || ec != std::errc() || end != frame.c_str() + newline) return tampered(frame);
  std::string json = frame.substr(newline + 1);
  if (json.size() != size) {
    return failure(CaseStatus::error, "error",
                   fmt::format("the case's report has {} bytes where its header promised {}: spec code wrote into "
                               "mtlgen's report channel",
                               json.size(), size));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return no_report(status);
  try {
    CaseResult r = case_result_from_json(nlohmann::json::parse(json));
    make_printable(r);
    return r;
  } catch (const std::exception& e) {  // nlohmann::json::exception, std::runtime_error
    return failure(CaseStatus::error, "error", fmt::format("the case's report is malformed: {}", printable(e.what(), 300)));
  }
}

CaseResult judge(const std::string& text, int status, const std::string& nonce) {
  if (text.empty()) return no_report(status);
  const std::string head = nonce + "\n";
  if (text.compare(0, head.size(), head) != 0) return tampered(text);
  std::string frame = text.substr(head.size());
  if (frame.rfind("CRASH ", 0) == 0) return failure(CaseStatus::crash, "crash", "crashed: " + printable(frame.substr(6)));
  if (frame.rfind("HANG ", 0) == 0) {
    return failure(CaseStatus::hang, "hang",
                   "did not finish within the time the watchdog allows: " + printable(frame.substr(5)) +
                       ". An endless loop, or a wait on a condition no thread will make true? Raise --timeout for "
                       "very large cases.");
  }
  if (frame.rfind("REPORT ", 0) == 0) return parse_report(frame, status);
  return tampered(text);
}

// What the child printed, under the first problem of a failure (a passing case stays quiet).
void attach_output(CaseResult& r, const RunningCase& running) {
  if (running.output_bytes == 0 || r.status == CaseStatus::pass || r.problems.empty()) return;
  r.problems.front().message +=
      fmt::format("\n      the case printed ({} bytes on stdout and stderr{}):\n      {}", running.output_bytes,
                  running.output_bytes > running.output.size() ? fmt::format(", the first {}", running.output.size()) : "",
                  printable(running.output, kOutputKept + 200));
}

// Reads what `fd` has now into `into` (up to `keep` bytes; the rest is counted and dropped).
// Returns false at end of file.
bool drain(int fd, std::string& into, size_t keep, size_t& total) {
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      total += static_cast<size_t>(n);
      into.append(buffer, std::min(static_cast<size_t>(n), keep - std::min(keep, into.size())));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
}

// Kills the case's whole process group (helpers, anything left running) and reaps the child.
int finish(RunningCase& running) {
  ::kill(-running.pid, SIGKILL);
  int status = 0;
  while (::waitpid(running.pid, &status, 0) < 0 && errno == EINTR) {
  }
  drain(running.output_fd, running.output, kOutputKept, running.output_bytes);
  ::close(running.fd);
  ::close(running.output_fd);
  running.fd = running.output_fd = -1;
  return status;
}

}  // namespace

RunningCase start_case(const CaseRequest& request, double watchdog_seconds) {
  int report[2], output[2];
  if (::pipe2(report, O_CLOEXEC) != 0) throw std::runtime_error("pipe() failed");
  if (::pipe2(output, O_CLOEXEC) != 0) {
    ::close(report[0]), ::close(report[1]);
    throw std::runtime_error("pipe() failed");
  }
  std::string nonce = random_nonce();
  std::snprintf(g_nonce, sizeof g_nonce, "%s", nonce.c_str());
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) child_main(request, report[1], output[1], watchdog_seconds);
  ::close(report[1]), ::close(output[1]);
  if (pid < 0) {
    ::close(report[0]), ::close(output[0]);
    throw std::runtime_error("fork() failed");
  }
  ::setpgid(pid, pid);  // as the child does: the group exists whichever runs first
  ::fcntl(report[0], F_SETFL, O_NONBLOCK);
  ::fcntl(output[0], F_SETFL, O_NONBLOCK);
  ::fcntl(report[0], F_SETPIPE_SZ, 1 << 20);  // best effort: the parent drains every few ms
  RunningCase running;
  running.pid = pid;
  running.fd = report[0];
  running.output_fd = output[0];
  running.nonce = std::move(nonce);
  running.deadline = monotonic_seconds() + watchdog_seconds;
  return running;
}

bool poll_case(RunningCase& running, CaseResult& result, double watchdog_seconds) {
  drain(running.output_fd, running.output, kOutputKept, running.output_bytes);
  size_t received = 0;
  bool open = drain(running.fd, running.received, kMaxReport + 1, received);
  if (running.received.size() > kMaxReport) {
    finish(running);
    result = failure(CaseStatus::error, "error",
                     fmt::format("the case sent more than {} MiB on its report channel: spec code wrote into it",
                                 kMaxReport >> 20));
  } else if (open && monotonic_seconds() < running.deadline) {
    return false;
  } else if (open) {
    finish(running);
    result = failure(CaseStatus::hang, "hang",
                     fmt::format("did not finish within {:g} s (watchdog; its process group was killed): an endless "
                                 "loop, or a wait on a condition no thread will make true? Raise --timeout for very "
                                 "large cases.",
                                 watchdog_seconds));
    result.sim_seconds = watchdog_seconds;  // the case ran that long, not 0
  } else {
    result = judge(running.received, finish(running), running.nonce);
    if (result.status == CaseStatus::hang) result.sim_seconds = watchdog_seconds * 0.9;  // when the child gave up
  }
  attach_output(result, running);
  return true;
}

}  // namespace mtlgen::verify
