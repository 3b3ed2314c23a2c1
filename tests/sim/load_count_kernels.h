// The generated row kernels that load_count_test.cpp runs, compiled with access counting in
// load_count_kernels.cpp (see tests/sim/CMakeLists.txt).
#pragma once

#include <cstdint>

#include "mtlsim/runtime.h"

namespace mtlsim::load_count {

enum class RowKernel { rms_norm, softmax, layer_norm, add_rms_norm, rms_norm_reads_twice, softmax_three_pass };

inline const char* name_of(RowKernel which) {
  constexpr const char* names[] = {"rms_norm", "softmax", "layer_norm", "add_rms_norm", "rms_norm_reads_twice", "softmax_three_pass"};
  return names[int(which)];
}

// One launch's buffers and dims: x, out, residual and h hold rows * n floats, w and b n (the
// norms' weight and bias; softmax takes neither; only add_rms_norm takes residual and h).
struct RowArgs {
  const float* x;
  const float* w;
  const float* b;
  float* out;
  const float* residual;
  float* h;
  uint32_t rows, n;
};

// The f32 entry point of `which` at `tg` threads per threadgroup (32, 256, 512 or 1024), as a
// launcher taking RowArgs; threadgroup array 0 holds tg / 32 floats, array 1 one float.
KernelThreadFn row_kernel_launcher(RowKernel which, uint32_t tg);

}  // namespace mtlsim::load_count
