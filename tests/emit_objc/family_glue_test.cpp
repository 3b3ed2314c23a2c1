// The glue of kernel families (generator/emit_objc/family_glue.cpp): where barriers go, that every
// check precedes the first dispatch, that each dispatch goes through its kernel's class with the
// family's buffers bound as the spec says, that the split encode gives each dispatch an encoder of
// its own, and that the library, the build and the bench program register families.
#include <fmt/format.h>

#include "emit_objc/family_glue.h"
#include "emit_objc/objc_emitter.h"
#include "golden.h"

namespace mtlgen::testing {
namespace family_glue_test {  // named: unity builds (tests/CMakeLists.txt)

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

ir::Kernel family(const std::string& spec) {
  for (auto& k : load({spec})) {
    if (k.is_family()) return k;
  }
  throw std::logic_error(spec + " holds no family");
}

std::string glue_mm(const ir::Kernel& k) {
  support::OutputSet out;
  emit::emit_objc(k, out);
  return out.files().at(k.name + "/" + emit::objc_class_name(k) + ".mm");
}

TEST(FamilyGlue, BarriersNameTheBuffersAnEarlierDispatchWrote) {
  const auto barriers = emit::family_barriers(*family("tests/emit_objc/in/glue_family.yaml").family);
  ASSERT_EQ(barriers.size(), 3u);
  EXPECT_TRUE(barriers[0].empty());
  ASSERT_EQ(barriers[1].size(), 1u);  // combine reads partial, which chunk_sum wrote
  EXPECT_EQ(barriers[1][0].buffer, "partial");
  EXPECT_EQ(barriers[1][0].after, 0u);
  ASSERT_EQ(barriers[2].size(), 1u);  // normalize reads total; x was only read
  EXPECT_EQ(barriers[2][0].buffer, "total");
  EXPECT_EQ(barriers[2][0].after, 1u);
}

TEST(FamilyGlue, SdpaMergeWaitsForEveryBufferThePartialPassWrote) {
  const auto sdpa = emit::family_barriers(*family("specs/sdpa_vector_2pass.yaml").family);
  ASSERT_EQ(sdpa.size(), 2u);
  std::vector<std::string> names;
  for (const auto& b : sdpa[1]) names.push_back(b.buffer);
  EXPECT_EQ(names, (std::vector<std::string>{"partial_out", "block_max", "block_sum"}));
}

TEST(FamilyGlue, BarriersOnlyInConcurrentEncodersAndBetweenDispatches) {
  const std::string mm = glue_mm(family("tests/emit_objc/in/glue_family.yaml"));
  EXPECT_EQ(count(mm, "if (!split && encoder.dispatchType == MTLDispatchTypeConcurrent) {"), 2u);
  EXPECT_EQ(count(mm, "[encoder memoryBarrierWithResources:resources count:1];"), 2u);
  const size_t first = mm.find("[_chunkSum encodeToCommandEncoder:encoder");
  const size_t barrier = mm.find("const id<MTLResource> resources[] = {partial};");
  const size_t second = mm.find("[_combine encodeToCommandEncoder:encoder");
  ASSERT_NE(first, std::string::npos);
  EXPECT_LT(first, barrier);
  EXPECT_LT(barrier, second);
}

TEST(FamilyGlue, ChecksEveryDispatchBeforeEncodingAny) {
  const std::string mm = glue_mm(family("tests/emit_objc/in/glue_family.yaml"));
  const size_t encode = mm.find("- (BOOL)encodeSplit:");
  const size_t first_dispatch = mm.find("encodeToCommandEncoder:encoder", encode);
  for (const char* check : {"family::check_dims(dims);", "mtlgen::kernels::chunk_sum::check_dims(",
                            "mtlgen::kernels::normalize::check_dims(", "MTGCheckBuffers(family::kName",
                            "MTGCheckBuffers(\"glue_family dispatch 3 (normalize)\"",
                            "[_chunkSum pipelineForTypes:", "[_normalize pipelineForTypes:"}) {
    const size_t at = mm.find(check, encode);
    ASSERT_NE(at, std::string::npos) << check;
    EXPECT_LT(at, first_dispatch) << check;
  }
}

// Both public encode calls forward to one body: the caller's encoder for every dispatch, never
// ended there, or per dispatch the encoder the block returns for its index, ended after it.
TEST(FamilyGlue, SplitEncodeGivesEachDispatchItsOwnEncoder) {
  const std::string mm = glue_mm(family("tests/emit_objc/in/glue_family.yaml"));
  EXPECT_EQ(count(mm, "return [self encodeSplit:NO\n"), 1u);
  EXPECT_EQ(count(mm, "encoderForDispatch:^id<MTLComputeCommandEncoder>(NSUInteger) { return encoder; }\n"), 1u);
  EXPECT_EQ(count(mm, "return [self encodeSplit:YES\n"), 1u);
  size_t previous = mm.find("- (BOOL)encodeSplit:");
  for (const char* dispatch : {"0, \"glue_family dispatch 1 (chunk_sum)\"", "1, \"glue_family dispatch 2 (combine)\"",
                               "2, \"glue_family dispatch 3 (normalize)\""}) {
    const size_t at = mm.find(std::string("EncoderFor(encoderForDispatch, ") + dispatch, previous);
    ASSERT_NE(at, std::string::npos) << dispatch;
    previous = at;
  }
  EXPECT_EQ(count(mm, "if (split) [encoder endEncoding];"), 3u);
}

// A family compiles nothing of its own: its prewarm is its kernels' prewarms, each once.
TEST(FamilyGlue, PrewarmsEveryMemberOnce) {
  const ir::Kernel k = family("tests/emit_objc/in/glue_family.yaml");
  const std::string mm = glue_mm(k);
  const size_t members = k.family->kernels.size();
  EXPECT_EQ(count(mm, " prewarmWithError:error]"), members);
  EXPECT_EQ(count(mm, " prewarmWithCompletionHandler:kernelDone]"), members);
  EXPECT_EQ(count(mm, "group->enter();"), members);
}

TEST(FamilyGlue, BindsMemberNamesToTheFamilys) {
  const std::string mm = glue_mm(family("tests/emit_objc/in/glue_family.yaml"));
  EXPECT_EQ(count(mm, "dispatch.dims.chunks = MemberDim((n + 256 - 1) / 256, \"dispatch 1 (chunk_sum)\", \"chunks\");"), 1u);
  EXPECT_EQ(count(mm, "dispatch.scalars.eps = scalars.epsilon;"), 1u);
  EXPECT_EQ(count(mm, "dispatch.types.Acc = mtlgen::DType::f32;"), 1u);
  EXPECT_NE(mm.find("sums:partial\n"), std::string::npos);
  EXPECT_NE(mm.find("y:out\n"), std::string::npos);
}

TEST(FamilyGlue, HarnessWritesABenchProgramForAFamilyAndBuildsItsGlue) {
  auto kernels = load({"tests/emit_objc/in/glue_family.yaml"});
  const auto files = run_emitter("harness", kernels).files();
  EXPECT_EQ(files.count("glue_family/autotune_glue_family.mm"), 0u);  // its tunings are its kernels'
  const std::string& bench = files.at("glue_family/bench_glue_family.mm");
  EXPECT_EQ(count(bench, "mtlgen::harness::family_bench_main(family, "), 1u);
  const std::string& harness = files.at("glue_family/glue_family_harness.h");
  EXPECT_EQ(count(harness, "return {\"chunk_sum\", \"combine\", \"normalize\"};"), 1u);
  EXPECT_EQ(count(harness, "return [glue_ encodeToCommandEncoder:encoder\n"), 1u);
  EXPECT_EQ(count(harness, "return [glue_ encodeWithEncoderForDispatch:encoder_for\n"), 1u);
  const std::string& cmake = files.at("CMakeLists.txt");
  EXPECT_EQ(count(cmake, "set(families glue_family)"), 1u);
  EXPECT_EQ(count(cmake, "add_executable(bench_${family} ${family}/bench_${family}.mm)"), 1u);
  EXPECT_EQ(count(cmake, "glue_family/MTGGlueFamily.mm"), 1u);
  EXPECT_EQ(count(cmake, "glue_family/glue_family_reference.cpp"), 1u);
  EXPECT_EQ(count(cmake, "mtlgen_air(glue_family "), 0u);
}

TEST(FamilyGlue, KernelEmissionIsTheSameWithOrWithoutTheFamily) {
  auto kernels = load({"tests/emit_objc/in/glue_family.yaml"});
  support::OutputSet alone, with_family;
  for (const auto& k : kernels) {
    if (!k.is_family()) emit::emit_objc(k, alone);
    emit::emit_objc(k, with_family);
  }
  for (const auto& [path, content] : alone.files()) EXPECT_EQ(with_family.files().at(path), content) << path;
}

}  // namespace family_glue_test
}  // namespace mtlgen::testing
