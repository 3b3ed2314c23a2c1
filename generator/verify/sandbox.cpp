#include "verify/sandbox.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "mtlsim/runtime.h"

namespace mtlgen::verify::sandbox {

namespace {

// Room for the simulator: fiber stacks, guarded buffers, the race detector's shadow (calloc'd,
// mostly untouched) and worker thread stacks, on top of the case's own buffers.
constexpr uint64_t kAddressSpace = 32ull << 30;

bool set_limit(int resource, rlim_t soft, rlim_t hard) {
  rlimit r{soft, hard};
  return ::setrlimit(resource, &r) == 0;
}

// Calls that create programs, files, sockets or IPC objects, or reach other processes, whatever
// their arguments.
constexpr const char* kDenied[] = {
    "execve", "execveat", "fork", "vfork", "ptrace", "process_vm_readv", "process_vm_writev",
    "socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
    "creat", "rename", "renameat", "renameat2", "unlink", "unlinkat", "mkdir", "mkdirat", "rmdir",
    "link", "linkat", "symlink", "symlinkat", "chmod", "fchmod", "fchmodat", "chown", "fchown",
    "lchown", "fchownat", "truncate", "mknod", "mknodat", "utime", "utimes", "utimensat",
    "futimesat", "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr",
    "fremovexattr", "mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "bpf",
    "perf_event_open", "keyctl", "add_key", "request_key", "userfaultfd", "io_uring_setup",
    "io_uring_enter", "io_uring_register", "setpgid", "setsid", "pidfd_open", "pidfd_getfd",
    "pidfd_send_signal", "name_to_handle_at", "open_by_handle_at", "kexec_load", "init_module",
    "finit_module", "delete_module", "reboot", "swapon", "swapoff", "acct", "quotactl",
    "fanotify_init", "mq_open", "mq_unlink", "shmget", "semget", "msgget", "tkill", "move_mount",
    "open_tree", "fsopen", "fsmount", "fsconfig", "fspick", "kcmp", "process_madvise",
};

// Open flags that write or create: any of them makes open/openat trap.
constexpr int kWriteFlags[] = {O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_TMPFILE & ~O_DIRECTORY};

// The calls the filter traps, by number, for the SIGSYS handler (which may not allocate).
struct Trapped {
  int number;
  const char* name;
};
Trapped g_trapped[160];
size_t g_trapped_count = 0;

struct Filter {
  scmp_filter_ctx ctx;
  int error = 0;
  const char* failed = nullptr;

  void rule(uint32_t action, const char* name, unsigned count = 0, const scmp_arg_cmp* args = nullptr) {
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) return;  // not on this architecture
    int rc = seccomp_rule_add_array(ctx, action, nr, count, args);
    if (rc != 0 && error == 0) error = rc, failed = name;
    if (action == SCMP_ACT_TRAP && g_trapped_count < std::size(g_trapped)) g_trapped[g_trapped_count++] = {nr, name};
  }
  void trap(const char* name) { rule(SCMP_ACT_TRAP, name); }
  void trap_if(const char* name, scmp_arg_cmp cmp) { rule(SCMP_ACT_TRAP, name, 1, &cmp); }
};

void add_rules(Filter& f) {
  for (const char* name : kDenied) f.trap(name);
  // glibc tries clone3 first and falls back to clone on ENOSYS; clone's flags are visible.
  f.rule(SCMP_ACT_ERRNO(ENOSYS), "clone3");
  f.rule(SCMP_ACT_ERRNO(ENOSYS), "openat2");
  f.trap_if("clone", SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
  for (int flag : kWriteFlags) {
    f.trap_if("open", SCMP_A1(SCMP_CMP_MASKED_EQ, static_cast<scmp_datum_t>(flag), static_cast<scmp_datum_t>(flag)));
    f.trap_if("openat", SCMP_A2(SCMP_CMP_MASKED_EQ, static_cast<scmp_datum_t>(flag), static_cast<scmp_datum_t>(flag)));
  }
  // Signals and limits: this process only (abort() is tgkill(own pid, ...)).
  const auto self = static_cast<scmp_datum_t>(::getpid());
  for (const char* name : {"kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"}) {
    f.trap_if(name, SCMP_A0(SCMP_CMP_NE, self));
  }
  f.trap_if("prlimit64", SCMP_A0(SCMP_CMP_NE, 0));
  f.trap_if("ioctl", SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI));
  f.trap_if("rt_sigaction", SCMP_A0(SCMP_CMP_EQ, SIGSYS));
}

// Reads exactly `size` bytes; false on EOF or error.
bool read_all(int fd, void* data, size_t size) {
  auto* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = ::read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool write_all(int fd, const void* data, size_t size) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

Limits limits_for(double watchdog_seconds, int workers) {
  Limits l;
  double cpu = std::ceil(watchdog_seconds * std::max(workers, 1)) + 2;
  l.cpu_seconds = static_cast<uint64_t>(std::min(cpu, 1e9));
  l.address_space_bytes = kAddressSpace;
  return l;
}

std::string enter(const Limits& limits) {
  const bool limited = set_limit(RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 2) &&
                       set_limit(RLIMIT_AS, limits.address_space_bytes, limits.address_space_bytes) &&
                       set_limit(RLIMIT_CORE, 0, 0) && set_limit(RLIMIT_FSIZE, 0, 0) &&
                       set_limit(RLIMIT_NOFILE, 256, 256);
  if (!limited) return fmt::format("cannot set the case's resource limits: {}", std::strerror(errno));
  Filter f{seccomp_init(SCMP_ACT_ALLOW)};
  if (!f.ctx) return "cannot create the seccomp filter";
  std::unique_ptr<void, void (*)(void*)> release(f.ctx, [](void* c) { seccomp_release(c); });
  add_rules(f);
  if (f.error != 0) return fmt::format("cannot add the seccomp rule for {}: {}", f.failed, std::strerror(-f.error));
  if (int rc = seccomp_load(f.ctx); rc != 0) return fmt::format("cannot load the seccomp filter: {}", std::strerror(-rc));
  return "";
}

const char* trapped_name(int number) {
  for (size_t i = 0; i < g_trapped_count; ++i) {
    if (g_trapped[i].number == number) return g_trapped[i].name;
  }
  return nullptr;
}

const char* purpose(const char* name) {
  auto is = [&](std::initializer_list<const char*> names) {
    for (const char* n : names) {
      if (std::strcmp(name, n) == 0) return true;
    }
    return false;
  };
  if (is({"execve", "execveat"})) return "starting a program";
  if (is({"fork", "vfork", "clone"})) return "creating a process";
  if (is({"socket", "socketpair", "connect", "bind", "listen", "accept", "accept4"})) return "networking";
  if (is({"open", "openat", "creat"})) return "opening a file for writing (a case writes no files)";
  if (is({"kill", "tgkill", "tkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "ptrace", "process_vm_readv",
          "process_vm_writev", "pidfd_open", "pidfd_getfd", "pidfd_send_signal", "prlimit64", "kcmp"})) {
    return "reaching another process";
  }
  if (is({"rt_sigaction"})) return "replacing the sandbox's SIGSYS handler";
  return "changing files or the system outside the case";
}

std::string syscall_name(int number) {
  std::unique_ptr<char, void (*)(void*)> name(seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, number), std::free);
  return name ? std::string(name.get()) : fmt::format("system call {}", number);
}

// ---- the line helper ----

namespace {

// addr2line's stdout for `offsets` in `object`, run without a shell; "" when it cannot run.
std::string run_addr2line(const std::string& object, const std::vector<uint64_t>& offsets) {
  std::vector<std::string> argv = {"addr2line", "-i", "-a", "-f", "-e", object};
  for (uint64_t o : offsets) argv.push_back(fmt::format("0x{:x}", o));
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  int out[2];
  if (::pipe(out) != 0) return "";
  pid_t pid = ::fork();
  if (pid == 0) {
    int null = ::open("/dev/null", O_RDWR);
    if (null < 0 || ::dup2(null, 0) < 0 || ::dup2(out[1], 1) < 0 || ::dup2(null, 2) < 0) ::_exit(127);
    ::close_range(3, ~0u, 0);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  ::close(out[1]);
  std::string text;
  char buffer[65536];
  for (ssize_t n; (n = ::read(out[0], buffer, sizeof buffer)) != 0 && text.size() < (16u << 20);) {
    if (n > 0) text.append(buffer, static_cast<size_t>(n));
    else if (errno != EINTR) break;
  }
  ::close(out[0]);
  if (pid > 0) ::waitpid(pid, nullptr, 0);
  return text;
}

// Serves requests until the case closes its end: [u32 path size][path][u32 count][count x u64].
[[noreturn]] void serve_lines(const std::string& module, int requests, int replies) {
  for (;;) {
    uint32_t size = 0, count = 0;
    if (!read_all(requests, &size, sizeof size) || size > 4096) ::_exit(0);
    std::string object(size, '\0');
    if (!read_all(requests, object.data(), size) || !read_all(requests, &count, sizeof count) || count > 65536) ::_exit(0);
    std::vector<uint64_t> offsets(count);
    if (!read_all(requests, offsets.data(), count * sizeof(uint64_t))) ::_exit(0);
    std::string text = object == module ? run_addr2line(object, offsets) : "";  // spec modules only
    auto n = static_cast<uint32_t>(text.size());
    if (!write_all(replies, &n, sizeof n) || !write_all(replies, text.data(), n)) ::_exit(0);
  }
}

LineHelper g_helper;

std::string ask_helper(const std::string& object, const std::vector<uintptr_t>& offsets) {
  auto size = static_cast<uint32_t>(object.size());
  auto count = static_cast<uint32_t>(offsets.size());
  std::vector<uint64_t> wide(offsets.begin(), offsets.end());
  if (!write_all(g_helper.request_fd, &size, sizeof size) || !write_all(g_helper.request_fd, object.data(), size) ||
      !write_all(g_helper.request_fd, &count, sizeof count) ||
      !write_all(g_helper.request_fd, wide.data(), wide.size() * sizeof(uint64_t))) {
    return "";
  }
  uint32_t n = 0;
  if (!read_all(g_helper.reply_fd, &n, sizeof n) || n > (16u << 20)) return "";
  std::string text(n, '\0');
  return read_all(g_helper.reply_fd, text.data(), n) ? text : "";
}

}  // namespace

LineHelper start_line_helper(const std::string& module) {
  int requests[2], replies[2];
  if (::pipe(requests) != 0) return {};
  if (::pipe(replies) != 0) {
    ::close(requests[0]), ::close(requests[1]);
    return {};
  }
  pid_t pid = ::fork();
  if (pid == 0) {  // keeps only its two pipe ends: the case's report channel must not stay open here
    if (::dup2(requests[0], 0) < 0 || ::dup2(replies[1], 1) < 0) ::_exit(0);
    int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, 2);
    ::close_range(3, ~0u, 0);
    serve_lines(module, 0, 1);
  }
  ::close(requests[0]), ::close(replies[1]);
  if (pid < 0) {
    ::close(requests[1]), ::close(replies[0]);
    return {};
  }
  return {requests[1], replies[0], pid};
}

void use_line_helper(const LineHelper& helper) {
  if (helper.pid < 0) return;
  g_helper = helper;
  mtlsim::set_addr2line(ask_helper);
}

}  // namespace mtlgen::verify::sandbox
