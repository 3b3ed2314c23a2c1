// expect: 7:3 the `register` storage class is not supported | "Restrictions"
// expect: 10:1 `thread_local` is not supported | "Restrictions"
#include <metal_stdlib>
using namespace metal;

void count(device int* out) {
  register int n = out[0];
  out[0] = n + 1;
}
thread_local constant int seen = 0;
