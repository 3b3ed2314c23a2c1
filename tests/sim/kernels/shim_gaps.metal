// Constructs of real kernels the shim once lacked: `constant` spelled `const` (as the MSL front end
// rewrites it), swizzles, metal:: type traits, simd_shuffle_and_fill_*, quad functions and
// is_function_constant_defined.
#include <metal_stdlib>
using namespace metal;

// ---- `constant` rewritten to `const` (same width) ----
struct ScaleArgs {
  float scale;
  uint n;
};
const float lut[4] = {0.5f, 1.0f, 2.0f, 4.0f};  // was: constant float lut[4] = {...};

// out[i] = in[i] * args.scale * lut[i % 4]
[[kernel]] void scale_by_table(const device float* in [[buffer(0)]],
                               device float* out [[buffer(1)]],
                               const ScaleArgs& args [[buffer(2)]],
                               const uint& offset [[buffer(3)]],
                               uint gid [[thread_position_in_grid]]) {
  if (gid >= args.n) return;
  out[gid] = in[gid] * args.scale * lut[(gid + offset) % 4];
}

// ---- swizzles ----
// Three float4 and one half4 per thread; the test spells out the expected components.
[[kernel]] void swizzles(const device float4* in [[buffer(0)]],
                         device float4* out [[buffer(1)]],
                         device half4* hout [[buffer(2)]],
                         uint gid [[thread_position_in_grid]]) {
  const float4 v = in[gid];
  float4 r;
  r.xy = v.zw + v.xy;            // (x + z, y + w)
  r.zw = float2(v.zyx[0], v.w);  // (z, w)
  out[3 * gid] = r;
  out[3 * gid + 1] = float4(v.yzw * 2.0f, dot(float3(v.xyz), float3(1.0f)));
  float4 s = v;
  s.yx = v.xy;                   // swap x and y
  s.zw += float2(10.0f, 20.0f);
  s.rg = -s.gr;
  out[3 * gid + 2] = s;
  hout[gid] = half4(half2(v.xy), half2(v.wz));
}

// ---- type traits ----
template <typename T>
using accum_t = conditional_t<is_floating_point_v<T>, float, int>;

template <typename T, enable_if_t<is_integral_v<T>, bool> = true>
int kind_of(T) { return 1; }
template <typename T, enable_if_t<is_floating_point_v<T>, bool> = true>
int kind_of(T) { return 2; }

static_assert(is_same_v<accum_t<half>, float> && is_same_v<accum_t<bfloat>, float>);
static_assert(is_same_v<accum_t<uint>, int>);
static_assert(is_same_v<remove_cv_t<const volatile half>, half>);
static_assert(is_floating_point_v<half> && is_floating_point_v<bfloat> && !is_floating_point_v<int>);
static_assert(is_arithmetic_v<half> && is_signed_v<half> && is_unsigned_v<uint> && !is_scalar_v<float4>);

// out[0..5]: kind_of for half, bfloat, float, int, ushort, and sizeof(accum_t<half>).
[[kernel]] void traits(device int* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  if (gid != 0) return;
  out[0] = kind_of(half(1));
  out[1] = kind_of(bfloat(1));
  out[2] = kind_of(1.0f);
  out[3] = kind_of(1);
  out[4] = kind_of(ushort(1));
  out[5] = int(sizeof(accum_t<half>));
}

// ---- simd_shuffle_and_fill ----
// Per lane l: data = l, fill = 100 + l. out[k * 32 + l] for k = down 3, up 3, down 3 mod 8,
// up 2 mod 4.
[[kernel]] void shuffle_and_fill(device float* out [[buffer(0)]],
                                 uint lane [[thread_index_in_simdgroup]]) {
  const float data = float(lane), fill = 100.0f + float(lane);
  out[0 * 32 + lane] = simd_shuffle_and_fill_down(data, fill, ushort(3));
  out[1 * 32 + lane] = simd_shuffle_and_fill_up(data, fill, ushort(3));
  out[2 * 32 + lane] = simd_shuffle_and_fill_down(data, fill, ushort(3), ushort(8));
  out[3 * 32 + lane] = simd_shuffle_and_fill_up(data, fill, ushort(2), ushort(4));
}

// ---- quad functions ----
// Per lane l: out[k * 32 + l] for k = quad_sum(l), quad_max(l), quad_prefix_exclusive_sum(l),
// quad_shuffle_xor(l, 1), quad_broadcast(l, 2), quad_shuffle_down(l, 1), quad_any(l == 6),
// quad_shuffle_and_fill_down(l, 100 + l, 1).
[[kernel]] void quads(device float* out [[buffer(0)]], uint lane [[thread_index_in_simdgroup]]) {
  const float v = float(lane);
  out[0 * 32 + lane] = quad_sum(v);
  out[1 * 32 + lane] = quad_max(v);
  out[2 * 32 + lane] = quad_prefix_exclusive_sum(v);
  out[3 * 32 + lane] = quad_shuffle_xor(v, ushort(1));
  out[4 * 32 + lane] = quad_broadcast(v, ushort(2));
  out[5 * 32 + lane] = quad_shuffle_down(v, ushort(1));
  out[6 * 32 + lane] = quad_any(lane == 6) ? 1.0f : 0.0f;
  out[7 * 32 + lane] = quad_shuffle_and_fill_down(v, 100.0f + v, ushort(1));
}

// ---- function constants ----
constant float bias [[function_constant(0)]];

[[kernel]] void maybe_bias(device float* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  out[gid] = is_function_constant_defined(bias) ? float(gid) + bias : float(gid);
}
