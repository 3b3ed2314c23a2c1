#include "context_switch.h"

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

