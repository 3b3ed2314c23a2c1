// Launchers of the generated rms_norm and softmax (f32), in the one TU compiled with access
// counting: every load and store of these kernels reaches mtlsim_count_access.
#include "load_count_kernels.h"
// Simulator copies of `mtlgen generate` output. Each file defines its own helpers (tg_sum, ...)
// and SIMD_SIZE, as Metal compiles each .metal alone: one namespace per file here.
#include <metal_stdlib>
// clang-format off
namespace rms_norm_msl {
#include <rms_norm/rms_norm.metal>
}
namespace rms_norm_reads_twice_msl {
#include <rms_norm_reads_twice/rms_norm_reads_twice.metal>
}
namespace layer_norm_msl {
#include <layer_norm/layer_norm.metal>
}
namespace add_rms_norm_msl {
#include <add_rms_norm/add_rms_norm.metal>
}
namespace softmax_msl {
#include <softmax/softmax.metal>
}
namespace softmax_three_pass_msl {
#include <softmax_three_pass/softmax_three_pass.metal>
}
// clang-format on

namespace mtlsim::load_count {

namespace {

constexpr float kEps = 1e-6f;

// The launcher arguments rms_norm, add_rms_norm and softmax take after their buffers and
// parameter struct.
#define MTLSIM_ROW_BUILTINS                                                                \
  static_cast<float*>(tc.threadgroup_memory[0]), as_builtin<uint32_t>(tc.threadgroup_position_in_grid), \
      tc.thread_index_in_threadgroup, tc.thread_index_in_simdgroup, tc.simdgroup_index_in_threadgroup

template <uint TG>
void launch_rms_norm(const ThreadContext& tc, void* user) {
  const auto& a = *static_cast<const RowArgs*>(user);
  rms_norm_msl::rms_norm_params params{a.rows, a.n, kEps};
  rms_norm_msl::rms_norm<float, TG>(a.x, a.w, a.out, params, MTLSIM_ROW_BUILTINS);
}

template <uint TG>
void launch_rms_norm_reads_twice(const ThreadContext& tc, void* user) {
  const auto& a = *static_cast<const RowArgs*>(user);
  rms_norm_reads_twice_msl::rms_norm_reads_twice_params params{a.rows, a.n, kEps};
  rms_norm_reads_twice_msl::rms_norm_reads_twice<float, TG>(a.x, a.w, a.out, params, MTLSIM_ROW_BUILTINS);
}

template <uint TG>
void launch_layer_norm(const ThreadContext& tc, void* user) {
  const auto& a = *static_cast<const RowArgs*>(user);
  layer_norm_msl::layer_norm_params params{a.rows, a.n, kEps};
  layer_norm_msl::layer_norm<float, TG>(a.x, a.w, a.b, a.out, params, static_cast<float*>(tc.threadgroup_memory[0]),
                                        static_cast<float*>(tc.threadgroup_memory[1]),
                                        as_builtin<uint32_t>(tc.threadgroup_position_in_grid),
                                        tc.thread_index_in_threadgroup, tc.thread_index_in_simdgroup,
                                        tc.simdgroup_index_in_threadgroup);
}

template <uint TG>
void launch_add_rms_norm(const ThreadContext& tc, void* user) {
  const auto& a = *static_cast<const RowArgs*>(user);
  add_rms_norm_msl::add_rms_norm_params params{a.rows, a.n, kEps};
  add_rms_norm_msl::add_rms_norm<float, TG>(a.x, a.residual, a.w, a.h, a.out, params, MTLSIM_ROW_BUILTINS);
}

template <uint TG>
void launch_softmax(const ThreadContext& tc, void* user) {
  const auto& a = *static_cast<const RowArgs*>(user);
  softmax_msl::softmax_params params{a.rows, a.n};
  softmax_msl::softmax<float, TG>(a.x, a.out, params, MTLSIM_ROW_BUILTINS);
}

template <uint TG>
void launch_softmax_three_pass(const ThreadContext& tc, void* user) {
  const auto& a = *static_cast<const RowArgs*>(user);
  softmax_three_pass_msl::softmax_three_pass_params params{a.rows, a.n};
  softmax_three_pass_msl::softmax_three_pass<float, TG>(a.x, a.out, params, MTLSIM_ROW_BUILTINS);
}

#undef MTLSIM_ROW_BUILTINS

template <uint TG>
KernelThreadFn launcher_at(RowKernel which) {
  switch (which) {
    case RowKernel::rms_norm: return launch_rms_norm<TG>;
    case RowKernel::softmax: return launch_softmax<TG>;
    case RowKernel::layer_norm: return launch_layer_norm<TG>;
    case RowKernel::add_rms_norm: return launch_add_rms_norm<TG>;
    case RowKernel::rms_norm_reads_twice: return launch_rms_norm_reads_twice<TG>;
    case RowKernel::softmax_three_pass: return launch_softmax_three_pass<TG>;
  }
  return nullptr;
}

}  // namespace

KernelThreadFn row_kernel_launcher(RowKernel which, uint32_t tg) {
  switch (tg) {
    case 32: return launcher_at<32>(which);
    case 256: return launcher_at<256>(which);
    case 512: return launcher_at<512>(which);
    case 1024: return launcher_at<1024>(which);
  }
  return nullptr;
}

}  // namespace mtlsim::load_count
