// The fiber switch under the scheduler: a suspended context is its saved stack pointer.
//
// On x86-64 the switch is fifteen instructions of our own (context_switch.cpp): it saves the
// callee-saved registers on the old stack and pops them from the new one. Unlike Boost's
// jump_fcontext it leaves MXCSR and the x87 control word alone: they are state of the OS thread
// that no kernel changes (MSL has no floating-point environment), and saving and reloading them
// took ~80% of jump_fcontext's time in a profile of rms_norm. Elsewhere Boost's fcontext does the
// switch (define MTLSIM_PORTABLE_CONTEXT to use that path on x86-64 too).
#pragma once

#include <cstddef>

namespace mtlsim::detail {

using ContextEntry = void (*)(void* arg);

// Saves the running context in *save and resumes `to` (a context saved by an earlier switch, or
// one from make_context). Returns when another switch resumes *save.
#if defined(__x86_64__) && !defined(MTLSIM_PORTABLE_CONTEXT)
extern "C" __attribute__((visibility("hidden"))) void mtlsim_context_switch(void** save, void* to);
inline void context_switch(void** save, void* to) { mtlsim_context_switch(save, to); }
#else
void context_switch(void** save, void* to);
#endif

// A fresh context on the stack whose highest address (exclusive, 16-byte aligned) is `top`, with
// `bytes` usable below it: the first switch to it calls entry(arg), which must never return.
// Resume it before making the next one on this OS thread (the portable path passes entry and
// arg through a thread-local).
void* make_context(void* top, size_t bytes, ContextEntry entry, void* arg);

}  // namespace mtlsim::detail
