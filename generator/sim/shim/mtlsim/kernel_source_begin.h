// Included by a simulator module's launchers right before the kernel's .metal file (and
// kernel_source_end.h right after it): every `return` the kernel's source executes notes its
// line and function for the lane, so that a thread returning before a barrier the others wait
// at is reported with the line of its `return` (barrier_early_exit). The shim's own headers are
// included before, so their code is untouched; a `return` in a constant evaluation notes nothing.
// Lines of the .metal file stay as they are (nothing is inserted into it).
#include <metal_stdlib>

#include "mtlsim/exec.h"

namespace mtlsim::detail {

[[gnu::always_inline, gnu::no_sanitize_thread]] constexpr inline void mark_return(int line, const char* function) noexcept {
  if (__builtin_is_constant_evaluated()) return;
  if (ReturnMark* marks = tls_return_marks) marks[tls_lane->index] = {line, function};
}

}  // namespace mtlsim::detail

// `for (mark;;) return x;` is one statement that returns at once: it fits wherever `return x;`
// did (an unbraced if/else included) and leaves the returned expression alone.
#define return for (::mtlsim::detail::mark_return(__LINE__, __func__);;) return
