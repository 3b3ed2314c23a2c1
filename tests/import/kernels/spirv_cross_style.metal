// Shaped like SPIRV-Cross output: struct-wrapped buffers, push constants at buffer 0, main0.
#include <metal_stdlib>
#include <simd/simd.h>

using namespace metal;

struct Push
{
    uint n;
    float scale;
};

struct SSBO
{
    float _m0[1];
};

kernel void main0(constant Push& registers [[buffer(0)]], const device SSBO& _46 [[buffer(1)]], device SSBO& _52 [[buffer(2)]], uint3 gl_GlobalInvocationID [[thread_position_in_grid]])
{
    uint _22 = gl_GlobalInvocationID.x;
    if (_22 < registers.n)
    {
        _52._m0[_22] = _46._m0[_22] * registers.scale;
    }
}
