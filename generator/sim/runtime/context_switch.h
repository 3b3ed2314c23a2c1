// The fiber switch under the scheduler: a suspended context is its saved stack pointer.
//
// Boost.Context's fcontext does the switch (never ucontext: it makes a syscall). Contexts switch
// directly fiber to fiber; the scheduler is not a context of its own. The switch is inline (it
// runs between every two simulated threads): the caller enters jump_fcontext directly.
#pragma once

#include <cstddef>

#include <boost/context/detail/fcontext.hpp>

namespace mtlsim::detail {

using ContextEntry = void (*)(void* arg);

// Saves the running context in *save and resumes `to` (a context saved by an earlier switch, or
// one from make_context). Returns when another switch resumes *save.
inline void context_switch(void** save, void* to) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(MTLSIM_PLAIN_SWITCH_CALL)
  // jump_fcontext resumes the other context with `jmp` to its return address, so a `call` into
  // it leaves one entry on the CPU's return stack buffer that no `ret` pops: every return the
  // resumed thread then makes up its call chain (out of the runtime, the shim, the kernel) was
  // predicted one frame off and mispredicted. Entered with its return address pushed by hand
  // and a `jmp` instead, the switch pushes no entry, and those returns are predicted from the
  // previous thread's identical chain. The 128 bytes skip the red zone the compiler may use.
  void* fctx;
  void* data;
  asm volatile(
      "leaq -128(%%rsp), %%rsp\n\t"
      "leaq 1f(%%rip), %%rax\n\t"
      "pushq %%rax\n\t"
      "jmp jump_fcontext@PLT\n"
      "1:\n\t"
      "leaq 128(%%rsp), %%rsp"
      : "=a"(fctx), "=d"(data), "+D"(to), "+S"(save)
      :
      : "rcx", "r8", "r9", "r10", "r11", "memory", "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6",
        "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "st", "st(1)", "st(2)",
        "st(3)", "st(4)", "st(5)", "st(6)", "st(7)"
#if defined(__AVX512F__)
        , "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "xmm26",
        "xmm27", "xmm28", "xmm29", "xmm30", "xmm31", "k1", "k2", "k3", "k4", "k5", "k6", "k7"
#endif
  );
  *static_cast<void**>(data) = fctx;
#else
  namespace fc = boost::context::detail;
  // jump_fcontext hands the resumed side the switcher's context; the resumed side stores it where
  // the switcher asked (the `save` passed along as data).
  const fc::transfer_t from = fc::jump_fcontext(static_cast<fc::fcontext_t>(to), save);
  *static_cast<void**>(from.data) = from.fctx;
#endif
}

// A fresh context on the stack whose highest address (exclusive, 16-byte aligned) is `top`, with
// `bytes` usable below it: the first switch to it calls entry(arg), which must never return.
// Resume it before making the next one on this OS thread (entry and arg travel through a
// thread-local).
void* make_context(void* top, size_t bytes, ContextEntry entry, void* arg);

}  // namespace mtlsim::detail
