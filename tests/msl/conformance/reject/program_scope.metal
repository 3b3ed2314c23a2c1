// expect: 7:1 a program-scope variable must be declared in the `constant` address space | "constant Address Space"
// expect: 8:1 a program-scope variable must be declared in the `constant` address space | "constant Address Space"
// expect: 9:1 a program-scope variable must be declared in the `constant` address space | "constant Address Space"
#include <metal_stdlib>
using namespace metal;

device float accum;
threadgroup float shared_sums[32];
float scale = 2.0f;
constant float kScale = 2.0f;
constant bool has_bias [[function_constant(0)]];
