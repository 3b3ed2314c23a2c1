#pragma once
// The sandbox a verification case's child process runs spec code in (kernel bodies, references,
// file-scope constructors of the compiled module). See docs/simulator.md, "Threat model".
//
// Entered in the child before the module is loaded, it is a seccomp filter plus rlimits:
// - no program runs: execve/execveat, fork/vfork and clone without CLONE_THREAD trap (threads
//   work: the simulator's workers are threads); clone3 answers ENOSYS so glibc falls back to clone,
//   whose flags a filter can see;
// - no file is created, changed or removed: opens with write, create, truncate or tmpfile flags
//   trap, as do rename/unlink/mkdir/link/chmod/chown/truncate/mknod and friends (seccomp cannot
//   see paths, so a case has no writable directory at all: it reads, never writes, files);
// - no network or IPC objects that outlive it: socket/socketpair/connect/bind/..., SysV
//   shm/sem/msg get, POSIX message queues, io_uring (whose operations bypass seccomp);
// - no other process is touched: ptrace, process_vm_*, pidfd_*, kill/tgkill/rt_sig*queueinfo
//   and prlimit64 aimed at any other process, setpgid/setsid (it stays in its process group,
//   which the parent kills), TIOCSTI;
// - no way to stop the trap from being reported: installing a SIGSYS handler traps too.
// A trapped call raises SIGSYS; the case's crash handler names the system call.
// rlimits: CPU time, address space, no core files, file size 0, a few file descriptors.
#include <cstdint>
#include <string>
#include <vector>

namespace mtlgen::verify::sandbox {

struct Limits {
  uint64_t cpu_seconds = 0;         // soft limit (SIGXCPU); the hard limit is 2 s later
  uint64_t address_space_bytes = 0; // RLIMIT_AS
};

// Limits for a case with this watchdog and this many simulator threads: the CPU limit backs up
// the parent's watchdog (it still holds if the parent dies).
Limits limits_for(double watchdog_seconds, int workers);

// Sets the rlimits and loads the seccomp filter. On failure returns a message (the case must
// not run); "" on success. Call with only the runtime's own code loaded.
std::string enter(const Limits& limits);

// "execve" for a system call number on this architecture, else "system call <n>".
std::string syscall_name(int number);
// For SIGSYS handlers (no allocation): the name of a call the filter traps, else nullptr; and
// what such a call was for, in words ("starting a program").
const char* trapped_name(int number);
const char* purpose(const char* name);

// ---- source lines of race reports from inside the sandbox ----
// The race reports' source lines come from addr2line, a program the sandbox cannot start. A
// helper process forked before the sandbox (holding no spec code) runs it, for `module` only,
// with numeric addresses only, without a shell.
struct LineHelper {
  int request_fd = -1, reply_fd = -1;
  int pid = -1;
};
LineHelper start_line_helper(const std::string& module);
// Makes resolve_race_sources() ask `helper` (in this process, from now on).
void use_line_helper(const LineHelper& helper);

}  // namespace mtlgen::verify::sandbox
