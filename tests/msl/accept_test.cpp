// Constructs of real Metal files the parse must accept (each seen in MLX's kernels, written here
// as minimal files of our own): no error, and the kernel is described.
#include "msl_test_util.h"

namespace mtlgen::msl::testing {
namespace {

void expect_accepted(const std::string& text) {
  Parsed p = parse_text(text);
  EXPECT_FALSE(p.diags.has_errors()) << p.diags.format_all();
  EXPECT_EQ(p.unit.entry_points().size(), 1u);
}

// Metal's half arithmetic is half: `a * b` of two halves is a half, so braced initialisers of
// half products narrow nothing (clang's __fp16 would promote them to float).
TEST(MslAccept, HalfArithmeticIsHalf) {
  expect_accepted(R"(#include <metal_stdlib>
using namespace metal;
struct pair_h { half re, im; };
pair_h mul(pair_h a, pair_h b) { return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }
static_assert(sizeof(half(1) * half(2)) == 2, "half * half is a half");
static_assert(sizeof(half(1) * 2.0f) == 4, "half * float is a float");
kernel void k(device half* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  half x{out[i] * out[i + 1]};
  out[i] = mul(pair_h{x, x}, pair_h{out[i], x}).re;
}
)");
}

// A class template whose members are overloaded on the address space of `this` keeps its
// implicit copy assignment: the later twins are left out of the parse, as out of the simulator's
// copy (declared twice, clang would drop the class's implicit members).
TEST(MslAccept, ClassTemplateOverloadedOnThisAddressSpaceStaysAssignable) {
  expect_accepted(R"(#include <metal_stdlib>
using namespace metal;
template <typename T>
struct cplx {
  T re, im;
  constexpr cplx() thread : re(0), im(0) {}
  constexpr cplx() threadgroup : re(0), im(0) {}
  constexpr cplx(T r, T i) thread : re(r), im(i) {}
  constexpr cplx(T r, T i) device : re(r), im(i) {}
};
kernel void k(device cplx<float>* out [[buffer(0)]], threadgroup cplx<float>* tile [[threadgroup(0)]],
              uint i [[thread_position_in_grid]]) {
  const cplx<float> one(1.0f, 0.0f);
  cplx<float> c;
  tile[i] = c;
  out[i] = one;
  out[i + 1] = tile[i];
}
)");
}

// A trait specialized once per address space (MLX's steel pointer_element, in a header) is one
// partial specialization once address spaces are erased: the later ones are left out of the
// parse, found from clang's redefinition errors; the first serves.
TEST(MslAccept, TraitSpecializedPerAddressSpace) {
  Parsed p = parse_input("address_space_traits.metal");
  EXPECT_FALSE(p.diags.has_errors()) << p.diags.format_all();
  EXPECT_EQ(p.unit.entry_points().size(), 1u);
}

}  // namespace
}  // namespace mtlgen::msl::testing
