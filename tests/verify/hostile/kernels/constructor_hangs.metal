// A program-scope constant with a dynamic initialiser: a file-scope constructor that runs when
// the simulator module loads (sandbox regression test, tests/verify/sandbox_test.cpp).
#include <metal_stdlib>
using namespace metal;

static int hostile_start() {
  for (volatile int i = 0;; i = i + 1) {}
  return 0;
}
constant int hostile_value = hostile_start();

kernel void constructor_hangs(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                              constant uint& n [[buffer(2)]], uint gid [[thread_position_in_grid]]) {
  if (gid < n) out[gid] = x[gid] + float(hostile_value);
}
