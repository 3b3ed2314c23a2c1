// Entry points, parameters, builtins, function constants and threadgroup variables of
// hand-written files in the styles of MLX, ggml and SPIRV-Cross.
#include <fmt/format.h>

#include "msl_test_util.h"

namespace mtlgen::msl::testing {
namespace {

std::string dump(const Unit& u) {
  std::string out;
  for (const auto& e : u.entry_points()) {
    out += fmt::format("entry {} fn={} at {}:{} def {}:{} maxtpt={}\n", e.host_name, e.function, e.loc.line,
                       e.loc.column, e.definition_loc.line, e.definition_loc.column,
                       e.max_total_threads_per_threadgroup.value_or(-1));
    for (const auto& a : e.template_args) out += fmt::format("  targ {}={}\n", a.name, a.value);
    for (const auto& p : e.params)
      out += fmt::format("  param {} kind={} space={} type='{}' elem='{}' ptr={} ref={} const={} index={}{} "
                         "builtin='{}' btype='{}' fc='{}' layout={}\n",
                         p.name, int(p.kind), to_string(p.address_space), p.type, p.element_type, p.is_pointer,
                         p.is_reference, p.is_const, p.index, p.index_explicit ? "!" : "", p.builtin_attribute,
                         p.builtin_type, p.function_constant, p.layout ? p.layout->name : "-");
  }
  for (const auto& f : u.function_constants())
    out += fmt::format("fc {} {} {} at {}:{}\n", f.name, f.type, f.index, f.loc.line, f.loc.column);
  for (const auto& t : u.threadgroup_variables())
    out += fmt::format("tg {} in {} type='{}' bytes={} at {}:{}\n", t.name, t.function, t.type, t.bytes, t.loc.line,
                       t.loc.column);
  return out;
}

TEST(MslDescribe, DISABLED_Dump) {
  for (const char* name : {"mlx_style.metal", "ggml_style.metal", "spirv_cross_style.metal"}) {
    Parsed p = parse_input(name);
    std::cout << "== " << name << "\n" << p.diags.format_all() << dump(p.unit) << p.unit.simulator_source();
  }
}

TEST(MslDescribe, MlxEntryPointsComeFromNestedHostNameMacros) {
  Parsed p = parse_input("mlx_style.metal");
  ASSERT_FALSE(p.diags.has_errors()) << p.diags.format_all();
  std::vector<std::string> names;
  for (const auto& e : p.unit.entry_points()) names.push_back(e.host_name);
  EXPECT_EQ(names, (std::vector<std::string>{"softmax_float32", "softmax_float16", "tiled_copy_float16_32_32",
                                             "tiled_copy_float32_16_8"}));
  const EntryPoint& e = entry(p.unit, "tiled_copy_float16_32_32");
  EXPECT_EQ(e.function, "tiled_copy");
  ASSERT_EQ(e.template_args.size(), 3u);
  EXPECT_EQ(e.template_args[0].name, "T");
  EXPECT_EQ(e.template_args[0].value, "half");
  EXPECT_EQ(e.template_args[1].name, "BM");
  EXPECT_EQ(e.template_args[1].value, "32");
  EXPECT_EQ(e.loc.line, 33);  // the macro invocation
  EXPECT_EQ(e.definition_loc.line, 8);
  const EntryPoint& softmax = entry(p.unit, "softmax_float16");
  EXPECT_EQ(softmax.template_args[1].name, "AccT");
  EXPECT_EQ(softmax.template_args[1].value, "float");  // a default template argument
  EXPECT_EQ(softmax.template_args[2].value, "4");
  EXPECT_NE(softmax.definition_loc.file.find("mlx_softmax.h"), std::string::npos);
}

TEST(MslDescribe, MlxParametersAreInstantiatedAndBoundByOrder) {
  Parsed p = parse_input("mlx_style.metal");
  const EntryPoint& e = entry(p.unit, "softmax_float16");
  const KernelParam& in = param(e, "in");
  EXPECT_EQ(in.kind, ParamKind::buffer);
  EXPECT_EQ(in.address_space, AddressSpace::device);
  EXPECT_EQ(in.type, "const device half *");
  EXPECT_EQ(in.element_type, "half");
  EXPECT_TRUE(in.is_pointer && in.is_const);
  EXPECT_EQ(in.index, 0);
  EXPECT_FALSE(in.index_explicit);
  EXPECT_EQ(param(e, "out").index, 1);
  EXPECT_FALSE(param(e, "out").is_const);
  const KernelParam& axis = param(e, "axis_size");
  EXPECT_EQ(axis.address_space, AddressSpace::constant);
  EXPECT_TRUE(axis.is_reference && axis.is_const);
  EXPECT_EQ(axis.element_type, "int");
  EXPECT_EQ(axis.index, 2);
  const KernelParam& sg = param(e, "simd_group_id");
  EXPECT_EQ(sg.kind, ParamKind::builtin);
  EXPECT_EQ(sg.builtin, ir::Builtin::simdgroup_index_in_threadgroup);
  EXPECT_EQ(sg.builtin_type, "uint");
  const EntryPoint& tiled = entry(p.unit, "tiled_copy_float32_16_8");
  EXPECT_EQ(param(tiled, "n").index, 2);
  EXPECT_TRUE(param(tiled, "n").index_explicit);
  EXPECT_EQ(param(tiled, "tid").builtin_type, "uint2");
  EXPECT_EQ(param(tiled, "tgid").builtin, ir::Builtin::threadgroup_position_in_grid);
}

TEST(MslDescribe, GgmlBindingsMixExplicitIndicesAndFirstFreeOnes) {
  Parsed p = parse_input("ggml_style.metal");
  ASSERT_FALSE(p.diags.has_errors()) << p.diags.format_all();
  const EntryPoint& mv = entry(p.unit, "kernel_mul_mv_q4_0_f32");
  EXPECT_EQ(mv.max_total_threads_per_threadgroup, 1024);
  EXPECT_EQ(param(mv, "x").index, 0);
  EXPECT_EQ(param(mv, "dst").index, 1);
  EXPECT_EQ(param(mv, "y").index, 2);  // 0 and 1 are taken explicitly
  EXPECT_FALSE(param(mv, "y").index_explicit);
  EXPECT_EQ(param(mv, "args").index, 3);
  EXPECT_EQ(param(mv, "x").element_type, "block_q4_0");
  EXPECT_EQ(param(mv, "tgpig").builtin_type, "uint3");

  const EntryPoint& norm = entry(p.unit, "kernel_rms_norm");
  EXPECT_FALSE(norm.max_total_threads_per_threadgroup);
  EXPECT_EQ(param(norm, "args").index, 0);
  EXPECT_EQ(param(norm, "src0").type, "const device char *");
  EXPECT_EQ(param(norm, "dst").index, 2);
  const KernelParam& bias = param(norm, "bias");
  EXPECT_EQ(bias.index, 3);
  EXPECT_EQ(bias.function_constant, "has_bias");
  const KernelParam& shmem = param(norm, "shmem_f32");
  EXPECT_EQ(shmem.kind, ParamKind::threadgroup);
  EXPECT_EQ(shmem.address_space, AddressSpace::threadgroup);
  EXPECT_EQ(shmem.index, 0);
  EXPECT_EQ(param(norm, "tpitg").builtin_type, "ushort");
  const KernelParam& width = param(norm, "w");
  EXPECT_EQ(width.kind, ParamKind::builtin);
  EXPECT_EQ(width.builtin, ir::Builtin::threads_per_simdgroup);  // the simdgroup width, bound like the others
  EXPECT_EQ(width.builtin_type, "uint");
  EXPECT_EQ(width.builtin_attribute, "threads_per_simdgroup");
}

TEST(MslDescribe, FunctionConstantsAtFileScope) {
  Parsed p = parse_input("ggml_style.metal");
  const auto& fcs = p.unit.function_constants();
  ASSERT_EQ(fcs.size(), 2u);
  EXPECT_EQ(fcs[0].name, "has_bias");
  EXPECT_EQ(fcs[0].type, "bool");
  EXPECT_EQ(fcs[0].index, 0);
  EXPECT_EQ(fcs[0].loc.line, 24);
  EXPECT_EQ(fcs[1].name, "n_extra");
  EXPECT_EQ(fcs[1].type, "int");
  EXPECT_EQ(fcs[1].index, 1);
}

// What each kernel reads, through helpers and templates: `import` lists only these to test.
TEST(MslDescribe, FunctionConstantsAKernelReads) {
  Parsed p = parse_text(R"(
#include <metal_stdlib>
using namespace metal;
constant bool use_a [[function_constant(0)]];
constant bool use_b [[function_constant(1)]];
constant int unused [[function_constant(2)]];
constant float table[2] = {1.0f, 2.0f};
inline float pick(float v) { return use_a ? v : -v; }
template <typename T> T twice(T v) { return use_b ? v * 2 : v; }
kernel void via_helper(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]]) { y[i] = pick(y[i]); }
template <typename T>
kernel void via_template(device T* y [[buffer(0)]], uint i [[thread_position_in_grid]]) { y[i] = twice(y[i]) + table[0]; }
template [[host_name("via_template_f32")]] kernel void via_template<float>(device float*, uint);
kernel void guarded(device float* y [[buffer(0)]], device float* z [[buffer(1), function_constant(use_b)]],
                    uint i [[thread_position_in_grid]]) { y[i] = 0; }
)");
  ASSERT_FALSE(p.diags.has_errors()) << p.diags.format_all();
  EXPECT_EQ(entry(p.unit, "via_helper").function_constants, (std::vector<std::string>{"use_a"}));
  EXPECT_EQ(entry(p.unit, "via_template_f32").function_constants, (std::vector<std::string>{"use_b"}));
  EXPECT_EQ(entry(p.unit, "guarded").function_constants, (std::vector<std::string>{"use_b"}));
}

// ggml numbers its function constants from per-kernel bases: `FC_BASE + k` is evaluated by clang.
TEST(MslDescribe, FunctionConstantIndicesAreConstantExpressions) {
  Parsed p = parse_text(R"(
#include <metal_stdlib>
using namespace metal;
#define FC_NORM 100
enum { FC_SCAN = 200 };
constant short norm_op [[function_constant(FC_NORM + 0)]];
constant bool  norm_cnt[[function_constant(FC_NORM + 1)]];
constant int   scan_w [[ function_constant(FC_SCAN * 2 + 3) ]] ;
constant int   plain [[function_constant(7)]];
kernel void k(device float* y [[buffer(0)]], device float* z [[buffer(1), function_constant(norm_cnt)]],
              uint i [[thread_position_in_grid]]) { y[i] = norm_cnt ? float(norm_op + scan_w + plain) : 0.0f; }
)");
  ASSERT_FALSE(p.diags.has_errors()) << p.diags.format_all();
  std::vector<std::string> found;
  for (const auto& fc : p.unit.function_constants())
    found.push_back(fmt::format("{}:{}:{}@{}:{}", fc.name, fc.type, fc.index, fc.loc.line, fc.loc.column));
  EXPECT_EQ(found, (std::vector<std::string>{"norm_op:short:100@6:16", "norm_cnt:bool:101@7:16",
                                             "scan_w:int:403@8:16", "plain:int:7@9:16"}));
  EXPECT_EQ(param(entry(p.unit, "k"), "z").function_constant, "norm_cnt");
  auto lines = p.unit.simulator_source();
  EXPECT_NE(lines.find("constant short norm_op [[function_constant(FC_NORM + 0)]];"), std::string::npos);
}

// Kernels written inside macros: defined by one (ggml style) and instantiated by one (MLX
// style); their parameters' words are read in the macro's definition, not at its use.
TEST(MslDescribe, KernelsInsideMacroExpansionsKeepTheirBuffers) {
  Parsed p = parse_text(R"(
#include <metal_stdlib>
using namespace metal;
#define DEFINE_COPY(name, T)                                                               \
  kernel void name(device const T* in [[buffer(0)]], constant uint& n [[buffer(1)]],     \
                   device T* out [[buffer(2)]], uint i [[thread_position_in_grid]]) {      \
    if (i < n) out[i] = in[i];                                                             \
  }
DEFINE_COPY(copy_f32, float)
template <typename T, int N>
[[kernel]] void scale(const device T* in [[buffer(0)]], device T* out [[buffer(1)]],
                      uint i [[thread_position_in_grid]]) { out[i] = in[i] * T(N); }
#define instantiate_scale(tname, T, N)                                          \
  template [[host_name("scale_" #tname "_" #N)]] [[kernel]] void scale<T, N>( \
      const device T* in [[buffer(0)]], device T* out [[buffer(1)]],           \
      uint i [[thread_position_in_grid]]);
instantiate_scale(f32, float, 2)
instantiate_scale(f32, float, 3)
)");
  ASSERT_FALSE(p.diags.has_errors()) << p.diags.format_all();
  for (const char* name : {"copy_f32", "scale_f32_2", "scale_f32_3"}) {
    SCOPED_TRACE(name);
    const EntryPoint& e = entry(p.unit, name);
    const KernelParam& in = param(e, "in");
    EXPECT_EQ(in.kind, ParamKind::buffer);
    EXPECT_EQ(in.address_space, AddressSpace::device);
    EXPECT_EQ(in.index, 0);
    EXPECT_TRUE(in.is_const);
    EXPECT_EQ(param(e, "out").kind, ParamKind::buffer);
    EXPECT_EQ(param(e, "out").index, e.function == "scale" ? 1 : 2);
    EXPECT_EQ(param(e, "i").kind, ParamKind::builtin);
  }
  const KernelParam& n = param(entry(p.unit, "copy_f32"), "n");
  EXPECT_EQ(n.address_space, AddressSpace::constant);
  EXPECT_EQ(n.index, 1);
  EXPECT_EQ(entry(p.unit, "scale_f32_3").template_args.at(1).value, "3");
}

// Address spaces are keywords: a declaration may use one before any header is included.
TEST(MslDescribe, AddressSpacesBeforeAnyInclude) {
  Parsed p = parse_text(R"(constant int kLanes = 32;
#include <metal_stdlib>
using namespace metal;
kernel void k(device int* out [[buffer(0)]], uint i [[thread_position_in_grid]]) { out[i] = kLanes; }
)");
  ASSERT_FALSE(p.diags.has_errors()) << p.diags.format_all();
  EXPECT_EQ(param(entry(p.unit, "k"), "out").address_space, AddressSpace::device);
}

// Buffer and threadgroup indices written as macros or expressions are evaluated by clang.
TEST(MslDescribe, ArgumentIndicesAreConstantExpressions) {
  Parsed p = parse_text(R"(
#include <metal_stdlib>
using namespace metal;
#define BASE 2
#define NEXT(i) (BASE + (i))
#define TG_SLOT 1
kernel void k(device float* a [[buffer(BASE)]], device float* b [[buffer(BASE + 1)]],
              device float* c [[buffer(NEXT(2) * 2)]], device float* d,
              threadgroup float* t [[threadgroup(TG_SLOT)]], uint i [[thread_position_in_grid]]) {
  a[i] = b[i] + c[i] + d[i] + t[0];
}
)");
  ASSERT_FALSE(p.diags.has_errors()) << p.diags.format_all();
  const EntryPoint& e = entry(p.unit, "k");
  EXPECT_EQ(param(e, "a").index, 2);
  EXPECT_EQ(param(e, "b").index, 3);
  EXPECT_EQ(param(e, "c").index, 8);
  EXPECT_EQ(param(e, "d").index, 0);  // the first index no argument names
  EXPECT_EQ(param(e, "t").index, 1);
}

// Constant memory is read-only: ggml passes its `constexpr constant` tables to `constant float*`.
TEST(MslDescribe, ConstantTablesBindToConstantPointers) {
  Parsed p = parse_text(R"(
#include <metal_stdlib>
using namespace metal;
constexpr constant static float kValues[4] = {-1.0f, 0.0f, 0.5f, 1.0f};
static inline int nearest(int n, constant float* val, float x) {
  int best = 0;
  for (int i = 1; i < n; ++i) best = fabs(val[i] - x) < fabs(val[best] - x) ? i : best;
  return best;
}
kernel void k(device const float* x [[buffer(0)]], device int* out [[buffer(1)]],
              uint i [[thread_position_in_grid]]) { out[i] = nearest(4, kValues, x[i]); }
)");
  ASSERT_FALSE(p.diags.has_errors()) << p.diags.format_all();
  EXPECT_NE(p.unit.simulator_source().find("const    static float kValues[4]"), std::string::npos)
      << p.unit.simulator_source();
}

TEST(MslDescribe, ThreadgroupVariablesInBodiesButNotPointerLocals) {
  Parsed mlx = parse_input("mlx_style.metal");
  std::vector<std::string> found;
  for (const auto& t : mlx.unit.threadgroup_variables()) found.push_back(t.function + ":" + t.name + ":" + t.type);
  EXPECT_EQ(found, (std::vector<std::string>{"softmax_single_row:local_max:AccT[SIMD_SIZE]",
                                             "softmax_single_row:local_normalizer:AccT[SIMD_SIZE]",
                                             "tiled_copy:tile:T[BM][BK + 1]"}));
  EXPECT_EQ(mlx.unit.threadgroup_variables()[2].bytes, 0u);  // depends on template parameters
  EXPECT_EQ(mlx.unit.threadgroup_variables()[2].loc.line, 14);

  Parsed ggml = parse_input("ggml_style.metal");
  ASSERT_EQ(ggml.unit.threadgroup_variables().size(), 1u);
  const ThreadgroupVariable& partial = ggml.unit.threadgroup_variables()[0];
  EXPECT_EQ(partial.type, "float[32]");
  EXPECT_EQ(partial.bytes, 128u);
  EXPECT_EQ(partial.function, "kernel_mul_mv_q4_0_f32");
}

TEST(MslDescribe, SpirvCrossStructWrappedBuffers) {
  Parsed p = parse_input("spirv_cross_style.metal");
  ASSERT_FALSE(p.diags.has_errors()) << p.diags.format_all();
  ASSERT_EQ(p.unit.entry_points().size(), 1u);
  const EntryPoint& e = entry(p.unit, "main0");
  const KernelParam& in = param(e, "_46");
  EXPECT_EQ(in.type, "const device SSBO &");
  EXPECT_TRUE(in.is_reference && in.is_const);
  EXPECT_EQ(in.index, 1);
  ASSERT_TRUE(in.layout);
  EXPECT_EQ(in.layout->fields[0].name, "data");
  EXPECT_EQ(in.layout->fields[0].array_count, 1u);
  EXPECT_FALSE(param(e, "_53").is_const);
  EXPECT_EQ(param(e, "_20").address_space, AddressSpace::constant);
  EXPECT_EQ(param(e, "gl_GlobalInvocationID").builtin, ir::Builtin::thread_position_in_grid);
  EXPECT_EQ(param(e, "gl_LocalInvocationID").builtin_type, "uint3");
}

TEST(MslDescribe, KernelsInsideMacrosAndAttributesWithBlanks) {
  Parsed p = parse_text(R"(#include <metal_stdlib>
using namespace metal;
template <typename T, bool Fast>
[[ kernel ]] void scale(device T* x [[ buffer(1) ]], uint i [[thread_position_in_grid]]) { x[i] *= Fast ? 2 : 3; }
template [[ host_name("scale_fast") ]] [[ kernel ]] void scale<float, true>(device float*, uint);
kernel void plain(device int* y, device int* z [[buffer(0)]]) {}
)");
  ASSERT_FALSE(p.diags.has_errors()) << p.diags.format_all();
  const EntryPoint& e = entry(p.unit, "scale_fast");
  EXPECT_EQ(e.template_args[1].name, "Fast");
  EXPECT_EQ(e.template_args[1].value, "true");
  EXPECT_EQ(param(e, "x").index, 1);
  const EntryPoint& plain = entry(p.unit, "plain");
  EXPECT_EQ(param(plain, "y").index, 1);  // 0 is taken by z
  EXPECT_EQ(p.unit.entry_points().size(), 2u);
}

}  // namespace
}  // namespace mtlgen::msl::testing
