#include "context_switch.h"

#include "mtlsim/exec.h"  // MTLSIM_TLS_FAST

namespace mtlsim::detail {

namespace fc = boost::context::detail;

namespace {
struct PendingStart {
  ContextEntry entry;
  void* arg;
};
// initial-exec: read once per fresh context, without a __tls_get_addr call.
thread_local constinit PendingStart tls_pending_start MTLSIM_TLS_FAST = {nullptr, nullptr};

void start(fc::transfer_t from) {
  *static_cast<void**>(from.data) = from.fctx;
  const PendingStart s = tls_pending_start;
  s.entry(s.arg);
}
}  // namespace

void* make_context(void* top, size_t bytes, ContextEntry entry, void* arg) {
  tls_pending_start = {entry, arg};
  return fc::make_fcontext(top, bytes, &start);
}

}  // namespace mtlsim::detail
