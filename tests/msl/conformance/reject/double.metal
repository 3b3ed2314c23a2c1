// expect: 6:1 `double` is not supported | 2.1 "Scalar Data Types"
// expect: 7:22 `double` is not supported | 2.1 "Scalar Data Types"
#include <metal_stdlib>
using namespace metal;

double widen(float x) {
  return static_cast<double>(x) * 0.5;
}
