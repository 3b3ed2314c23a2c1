// The fiber switch under the scheduler: a suspended context is its saved stack pointer.
//
// Boost.Context's fcontext does the switch (never ucontext: it makes a syscall). Contexts switch
// directly fiber to fiber; the scheduler is not a context of its own. The switch is inline (one
// call, to jump_fcontext, per switch), as it runs between every two simulated threads.
#pragma once

#include <cstddef>

#include <boost/context/detail/fcontext.hpp>

namespace mtlsim::detail {

using ContextEntry = void (*)(void* arg);

// Saves the running context in *save and resumes `to` (a context saved by an earlier switch, or
// one from make_context). Returns when another switch resumes *save.
inline void context_switch(void** save, void* to) {
  namespace fc = boost::context::detail;
  // jump_fcontext hands the resumed side the switcher's context; the resumed side stores it where
  // the switcher asked (the `save` passed along as data).
  const fc::transfer_t from = fc::jump_fcontext(static_cast<fc::fcontext_t>(to), save);
  *static_cast<void**>(from.data) = from.fctx;
}

// A fresh context on the stack whose highest address (exclusive, 16-byte aligned) is `top`, with
// `bytes` usable below it: the first switch to it calls entry(arg), which must never return.
// Resume it before making the next one on this OS thread (entry and arg travel through a
// thread-local).
void* make_context(void* top, size_t bytes, ContextEntry entry, void* arg);

}  // namespace mtlsim::detail
