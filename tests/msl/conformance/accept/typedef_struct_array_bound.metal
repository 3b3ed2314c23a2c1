// ggml-common.h style: an array bound that multiplies, inside a typedef'd struct, and bounds
// of a plain array typedef and field.
#include <metal_stdlib>
using namespace metal;

#define QK4_0 32
typedef struct {
  half d;
  uint8_t qs[QK4_0 / 2 * 1];
  uint8_t pad[2 * 2];
} block_q4_0;
typedef float row_t[QK4_0 * 2];
struct tiles {
  float t[4 * 8];
};

kernel void run(device const block_q4_0* in [[buffer(0)]], device float* out [[buffer(1)]],
                uint gid [[thread_position_in_grid]]) {
  out[gid] = float(in[gid].d) * float(in[gid].qs[0]);
}
