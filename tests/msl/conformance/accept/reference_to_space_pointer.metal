// A reference to a pointer into a named address space names the caller's pointer variable (in
// the thread address space, as every argument): MLX's quantized kernels advance their buffer
// pointers through such parameters, and Apple's compiler builds them.
#include <metal_stdlib>
using namespace metal;

template <typename T>
void advance(const device T*& x, device T* const& y, thread int& count, int by) {
  x += by;
  count += int(y[0]);
}

kernel void run(const device float* in [[buffer(0)]], device float* out [[buffer(1)]],
                uint gid [[thread_position_in_grid]]) {
  int count = 0;
  advance(in, out, count, int(gid));
  out[gid] = in[0] + float(count);
}
