// expect: 6:3 virtual functions are not supported | "Restrictions"
#include <metal_stdlib>
using namespace metal;

struct Op {
  virtual float apply(float x) const { return x; }
};

kernel void run(device float* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  Op op;
  out[gid] = op.apply(out[gid]);
}
