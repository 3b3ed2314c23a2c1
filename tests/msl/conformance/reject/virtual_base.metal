// expect: 9:33 virtual base classes are not supported | "Restrictions"
#include <metal_stdlib>
using namespace metal;

struct Base {
  float bias;
};

struct Shifted : public virtual Base {
  float apply(float x) const { return x + bias; }
};

kernel void run(device float* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  Shifted s;
  s.bias = 1.0f;
  out[gid] = s.apply(out[gid]);
}
