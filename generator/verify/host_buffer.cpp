#include "verify/host_buffer.h"

#include <algorithm>
#include <cstring>

#include "verify/elements.h"
#include "verify/inputs.h"

namespace mtlgen::verify {

std::vector<HostBuffer> host_buffers(const ir::Kernel& k, const ir::Variant& v, const ir::TestCase& t,
                                     const expr::Env& env) {
  const uint64_t seed = t.seed.value_or(k.tests.seed);
  std::vector<HostBuffer> buffers;
  for (const ir::Buffer& decl : k.buffers) {
    HostBuffer b;
    b.decl = &decl;
    b.type = decl.type.resolve(v.types);
    for (const auto& e : decl.shape) {
      b.shape.push_back(expr::evaluate(e, env));
      b.elements *= static_cast<size_t>(std::max<int64_t>(b.shape.back(), 0));
    }
    if (!b.starts_unwritten()) {
      b.initial.resize(b.bytes());
      fill_input(k.input_fill(t, decl.name), b.type, b.initial.data(), b.elements, buffer_seed(seed, decl.name),
                 k.block_of(decl));
    }
    buffers.push_back(std::move(b));
  }
  return buffers;
}

std::vector<SimulatedBuffer> simulated_buffers(const ir::Kernel& k, const ir::Variant& v, const ir::TestCase& t,
                                               const expr::Env& env) {
  std::vector<SimulatedBuffer> buffers;
  for (HostBuffer& h : host_buffers(k, v, t, env)) {
    SimulatedBuffer b;
    static_cast<HostBuffer&>(b) = std::move(h);
    b.sim = std::make_unique<GuardedBuffer>(b.decl->name, b.bytes(), ir::info(b.type).size);
    buffers.push_back(std::move(b));
  }
  return buffers;
}

void SimulatedBuffer::start_run(GuardedBuffer::Placement placement, int output_poison_pattern) {
  sim->place(placement);
  auto* data = static_cast<uint8_t*>(sim->data());
  if (!starts_unwritten()) {
    std::memcpy(data, initial.data(), bytes());
    return;
  }
  const std::vector<uint8_t> pattern = output_poison(type, output_poison_pattern);
  for (size_t i = 0; i < bytes(); ++i) data[i] = pattern[i % pattern.size()];
}

}  // namespace mtlgen::verify
