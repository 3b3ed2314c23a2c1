// Address spaces spelled through macros, used more than once (MLX_MTL_CONST style).
#include <metal_stdlib>
using namespace metal;

#define CONST constant
#define STATIC_CONST static constant constexpr const
#define DEV device

CONST float kScale = 2.0f;
CONST float kBias = 1.0f;
CONST int kLanes[2] = {1, 2};
STATIC_CONST int kRows = 4;
STATIC_CONST int kCols = 8;

float twice(DEV const float* p) { return p[0] * kScale; }
float thrice(CONST float& x) { return x * 3.0f; }

kernel void run(DEV float* out [[buffer(0)]], CONST float& k [[buffer(1)]],
                uint gid [[thread_position_in_grid]]) {
  DEV float* row = out + gid;
  row[0] = twice(out) + kBias + thrice(k) + float(kLanes[0] + kRows * kCols);
}
