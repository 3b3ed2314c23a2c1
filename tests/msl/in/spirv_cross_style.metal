#include <metal_stdlib>

using namespace metal;

struct Push
{
    uint n;
    float alpha;
};

struct SSBO
{
    float data[1];
};

struct SSBO_out
{
    float data[1];
};

kernel void main0(constant Push& _20 [[buffer(0)]], const device SSBO& _46 [[buffer(1)]], device SSBO_out& _53 [[buffer(2)]], uint3 gl_GlobalInvocationID [[thread_position_in_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    uint _30 = gl_GlobalInvocationID.x;
    if (_30 < _20.n)
    {
        _53.data[_30] = _46.data[_30] * _20.alpha;
    }
}
