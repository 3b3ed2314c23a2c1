#include "context_switch.h"

#include <cstdint>

#if defined(__x86_64__) && !defined(MTLSIM_PORTABLE_CONTEXT)

// mtlsim_context_switch(void** save, void* to): System V ABI, so rdi = save, rsi = to.
// mtlsim_context_start: where a fresh context's first switch returns to; r12 holds the entry and
// r13 its argument (make_context put them where the switch pops those registers from).
asm(R"(
  .text
  .p2align 4
  .globl mtlsim_context_switch
  .hidden mtlsim_context_switch
  .type mtlsim_context_switch, @function
mtlsim_context_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size mtlsim_context_switch, .-mtlsim_context_switch

  .p2align 4
  .hidden mtlsim_context_start
  .type mtlsim_context_start, @function
mtlsim_context_start:
  movq %r13, %rdi
  callq *%r12
  ud2
  .size mtlsim_context_start, .-mtlsim_context_start
)");

extern "C" void mtlsim_context_start();

namespace mtlsim::detail {

// The frame mtlsim_context_switch pops: r15, r14, r13 = arg, r12 = entry, rbx, rbp, then the
// return address. 72 bytes below a 16-byte aligned top leaves the stack 16-byte aligned at the
// start routine's call, as the ABI wants.
void* make_context(void* top, size_t, ContextEntry entry, void* arg) {
  auto* sp = reinterpret_cast<uintptr_t*>(static_cast<char*>(top) - 72);
  sp[0] = sp[1] = sp[4] = sp[5] = 0;
  sp[2] = reinterpret_cast<uintptr_t>(arg);
  sp[3] = reinterpret_cast<uintptr_t>(entry);
  sp[6] = reinterpret_cast<uintptr_t>(&mtlsim_context_start);
  return sp;
}

}  // namespace mtlsim::detail

#else

#include <boost/context/detail/fcontext.hpp>

namespace mtlsim::detail {

namespace fc = boost::context::detail;

namespace {
// jump_fcontext hands the resumed side the switcher's context; the resumed side stores it where
// the switcher asked (the `save` passed along as data).
struct PendingStart {
  ContextEntry entry;
  void* arg;
};
thread_local PendingStart tls_pending_start;

void start(fc::transfer_t from) {
  *static_cast<void**>(from.data) = from.fctx;
  const PendingStart s = tls_pending_start;
  s.entry(s.arg);
}
}  // namespace

void context_switch(void** save, void* to) {
  const fc::transfer_t from = fc::jump_fcontext(static_cast<fc::fcontext_t>(to), save);
  *static_cast<void**>(from.data) = from.fctx;
}

void* make_context(void* top, size_t bytes, ContextEntry entry, void* arg) {
  tls_pending_start = {entry, arg};
  return fc::make_fcontext(top, bytes, &start);
}

}  // namespace mtlsim::detail

#endif
