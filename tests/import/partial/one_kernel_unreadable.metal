// Three kernels; one of them uses a helper that does not compile. `import` writes skeletons for
// the two it can read and lists the third with the error in its helper.
#include <metal_stdlib>
using namespace metal;

struct Broken {
  undeclared_type value;
};

template <typename T>
T broken_helper(T x) {
  Broken b;
  return x + b.value;
}

// An error no kernel depends on: reported as a warning, costs no skeleton.
inline float unused_helper(float x) { return x + missing_constant; }

kernel void copy_rows(const device float* src [[buffer(0)]], device float* dst [[buffer(1)]],
                      uint i [[thread_position_in_grid]]) {
  dst[i] = src[i];
}

template <typename T>
kernel void uses_broken(const device T* src [[buffer(0)]], device T* dst [[buffer(1)]],
                        uint i [[thread_position_in_grid]]) {
  dst[i] = broken_helper(src[i]);
}

template [[host_name("uses_broken_f32")]] kernel void uses_broken<float>(const device float*, device float*, uint);

kernel void scale_rows(const device float* src [[buffer(0)]], device float* dst [[buffer(1)]],
                       constant float& s [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  dst[i] = src[i] * s;
}
