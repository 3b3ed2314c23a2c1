#pragma once
// The buffers of one case, as the host allocates and fills them: one type for a kernel's case and
// a family's (case_runner.cpp, family_runner.cpp, which simulate it) and for the GPU path
// (cuda/runner_protocol.cpp, which hands it to the runner).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "expr/expr.h"
#include "ir/kernel.h"
#include "verify/guarded_buffer.h"

namespace mtlgen::verify {

struct HostBuffer {
  const ir::Buffer* decl = nullptr;
  ir::ScalarType type = ir::ScalarType::f32;
  std::vector<int64_t> shape;  // at the case's dims
  size_t elements = 1;
  std::vector<uint8_t> initial;  // the case's inputs; empty where the buffer starts unwritten

  // Starts each run as "never written": outputs the caller does not initialise, and a family's
  // intermediates (the host never sees them).
  bool starts_unwritten() const { return !decl->is_host_input(); }
  size_t bytes() const { return elements * static_cast<size_t>(ir::info(type).size); }
};

// Every buffer of `k` for case `t` of variant `v` (`env`: Kernel::env_for of the case's dims), in
// declaration order, the inputs filled as the spec says.
std::vector<HostBuffer> host_buffers(const ir::Kernel& k, const ir::Variant& v, const ir::TestCase& t,
                                     const expr::Env& env);

// A HostBuffer as the simulator runs it: in guarded memory, with what each run left in it.
struct SimulatedBuffer : HostBuffer {
  std::unique_ptr<GuardedBuffer> sim;
  std::vector<std::vector<uint8_t>> snapshots;  // per run, outputs only

  // The guarded memory placed for a run and holding what a run starts with: the inputs, or the
  // run's poison (`output_poison`: which of output_poison()'s patterns) where it starts unwritten.
  void start_run(GuardedBuffer::Placement placement, int output_poison_pattern);
};

std::vector<SimulatedBuffer> simulated_buffers(const ir::Kernel& k, const ir::Variant& v, const ir::TestCase& t,
                                               const expr::Env& env);

}  // namespace mtlgen::verify
