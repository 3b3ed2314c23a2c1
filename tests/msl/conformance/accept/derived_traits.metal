// Non-virtual inheritance without virtual functions: traits deriving from bool_constant /
// integral_constant (as Apple's and MLX's type traits do), and a plain struct deriving another.
#include <metal_stdlib>
using namespace metal;

template <typename T, T v> struct int_constant { static constant constexpr T value = v; };
template <bool B> struct flag : int_constant<bool, B> {};
template <typename T> struct is_wide : flag<sizeof(T) >= 4> {};
template <typename T> struct lanes_of : int_constant<int, 32 / int(sizeof(T))> {};

struct base_args {
  uint n;
};
struct scaled_args : base_args {
  float scale;
};

kernel void run(device float* out [[buffer(0)]], constant scaled_args& args [[buffer(1)]],
                uint gid [[thread_position_in_grid]]) {
  if (gid >= args.n) return;
  out[gid] *= is_wide<float>::value ? args.scale : float(lanes_of<half>::value);
}
