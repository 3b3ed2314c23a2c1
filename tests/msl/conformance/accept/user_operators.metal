// User operators: `operator*` and `operator&` name functions; they declare no pointer.
#include <metal_stdlib>
using namespace metal;

struct cplx {
  float re, im;
};

constexpr cplx operator*(cplx a, cplx b) { return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }
constexpr cplx operator&(cplx a, cplx b) { return {a.re, b.im}; }

template <typename T>
T operator*(T a, thread const cplx& b) { return a * b.re; }

kernel void run(device cplx* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  cplx a = out[gid];
  out[gid] = (a * a) & a;
  out[gid].re = 2.0f * a;
}
