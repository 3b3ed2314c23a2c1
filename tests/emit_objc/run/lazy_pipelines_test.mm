// Runs the glue generated for the shipped specs against a stub Metal device that counts pipeline
// creations (stub_classes.mm): loading creates none, the first encode of a variant creates one,
// later and concurrent encodes create no more, a prewarm creates exactly the variants it names, the
// asynchronous prewarm's completion fires once, and a pipeline that cannot run its threadgroup fails
// the encode with an NSError, every time, without being created again; a family encodes into the
// caller's one encoder, or each dispatch into one of its own. Exit status 0 on success.
#import "support/MTGKernelLibrary.h"

#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#import "stub_classes.h"

namespace {

int failures = 0;

void Check(bool ok, const std::string& what, NSError* _Nullable error = nil) {
  std::printf("%s: %s%s\n", ok ? "ok" : "FAILED", what.c_str(), ok || error == nil ? "" : (": " + MTGDescription(error)).c_str());
  if (!ok) ++failures;
}

int Created() { return StubCounts().pipelines.load(); }

StubLibrary* NewLibrary() {
  StubDevice* device = [[StubDevice alloc] init];
  device.name = @"stub device";
  device.maxThreadgroupMemoryLength = 32768;
  StubLibrary* library = [[StubLibrary alloc] init];
  library.device = device;
  library.functionNames = [MTGKernelLibrary entryPoints];
  return library;
}

MTGKernelLibrary* Load(StubLibrary* library) {
  NSError* error = nil;
  MTGKernelLibrary* kernels = [[MTGKernelLibrary alloc] initWithLibrary:library tuningTable:nullptr error:&error];
  Check(kernels != nil, "the shipped library loads", error);
  return kernels;
}

id<MTLBuffer> NewBuffer() {
  StubBuffer* buffer = [[StubBuffer alloc] initWithLength:1 << 20];
  buffer.storageMode = MTLStorageModeShared;
  return buffer;
}

BOOL EncodeArgmax(MTGArgmax* argmax, mtlgen::DType type, NSError** error) {
  StubEncoder* encoder = [[StubEncoder alloc] init];
  return [argmax encodeToCommandEncoder:encoder
                                      x:NewBuffer()
                                xOffset:0
                                    out:NewBuffer()
                              outOffset:0
                                   dims:MTGArgmaxDims{.rows = 1, .n = 1024}
                                  types:MTGArgmaxTypes{.T = type}
                                  error:error];
}

// The number of distinct type choices among rms_norm's compiled variants: what its prewarm creates.
int RmsNormTypeChoices() {
  std::set<int> types;
  for (NSUInteger v = 0; v < [MTGRmsNorm variantCount]; ++v) types.insert(static_cast<int>([MTGRmsNorm typesOfVariant:v].T));
  return static_cast<int>(types.size());
}

// Runs `start` with a completion handler and waits until that handler has run; returns its error
// and how often it had run by then (once).
template <typename Start>
std::pair<NSError*, int> AwaitCompletion(Start start) {
  auto mutex = std::make_shared<std::mutex>();
  auto done = std::make_shared<std::condition_variable>();
  auto calls = std::make_shared<int>(0);
  __block NSError* result = nil;
  start(^(NSError* _Nullable error) {
    std::lock_guard<std::mutex> lock(*mutex);
    result = error;
    ++*calls;
    done->notify_all();
  });
  std::unique_lock<std::mutex> lock(*mutex);
  done->wait(lock, [&] { return *calls > 0; });
  return {result, *calls};
}

void FirstUseCreatesOnce(MTGKernelLibrary* kernels) {
  NSError* error = nil;
  Check(EncodeArgmax(kernels.argmax, mtlgen::DType::f32, &error), "argmax encodes", error);
  Check(Created() == 1, "the first encode creates one pipeline (" + std::to_string(Created()) + ")");
  Check(StubCounts().dispatches == 1, "and dispatches once");
  Check(EncodeArgmax(kernels.argmax, mtlgen::DType::f32, &error), "argmax encodes again");
  Check(Created() == 1, "a second encode of the variant creates none (" + std::to_string(Created()) + ")");

  StubCounts().slowCreation = true;
  std::vector<std::thread> threads;
  std::atomic<int> encoded{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) encoded += EncodeArgmax(kernels.argmax, mtlgen::DType::f16, nullptr) ? 1 : 0;
    });
  }
  for (auto& thread : threads) thread.join();
  StubCounts().slowCreation = false;
  Check(encoded == 80, "80 concurrent encodes from 8 threads succeed (" + std::to_string(encoded.load()) + ")");
  Check(Created() == 2, "and create the half variant's pipeline once (" + std::to_string(Created()) + " in all)");
  const std::string f16 = mtlgen::kernels::argmax::entry_point(MTGArgmaxTypes{.T = mtlgen::DType::f16},
                                                                [kernels.argmax tuningForTypes:{.T = mtlgen::DType::f16}]);
  Check(StubCounts().timesCreated(f16) == 1, f16 + " was created exactly once");
}

void PrewarmCreatesWhatItNames(MTGKernelLibrary* kernels) {
  std::vector<MTGArgmaxVariant> variants;
  int fresh = 0;
  const MTGArgmaxTuning chosen = [kernels.argmax tuningForTypes:{.T = mtlgen::DType::f32}];
  for (NSUInteger v = 0; v < [MTGArgmax variantCount]; ++v) {
    const MTGArgmaxVariant variant{[MTGArgmax typesOfVariant:v], [MTGArgmax tuningOfVariant:v]};
    if (variant.types.T != mtlgen::DType::f32) continue;
    variants.push_back(variant);
    fresh += variant.tuning.TG == chosen.TG ? 0 : 1;  // the default one exists already
  }
  const int before = Created();
  NSError* error = nil;
  Check([kernels.argmax prewarmVariants:variants error:&error], "argmax prewarms its float variants", error);
  Check(Created() - before == fresh, "a prewarm of " + std::to_string(variants.size()) + " variants, one of them created, creates " +
                                        std::to_string(fresh) + " (" + std::to_string(Created() - before) + ")");
  Check([kernels.argmax prewarmVariants:variants error:&error] && Created() - before == fresh, "prewarming them again creates none");

  const int rms = Created();
  Check([kernels.rmsNorm prewarmWithError:&error], "rms_norm prewarms its default tunings", error);
  Check(Created() - rms == RmsNormTypeChoices(), "one pipeline per type choice (" + std::to_string(Created() - rms) + ")");
}

void AsyncPrewarmCompletes() {
  MTGKernelLibrary* kernels = Load(NewLibrary());
  const int before = Created(), requests = StubCounts().asyncRequests;
  auto [error, calls] = AwaitCompletion([&](void (^handler)(NSError* _Nullable)) {
    [kernels.rmsNorm prewarmWithCompletionHandler:handler];
  });
  Check(calls == 1 && error == nil, "rms_norm's asynchronous prewarm completes once, without error");
  Check(Created() - before == RmsNormTypeChoices() && StubCounts().asyncRequests - requests == RmsNormTypeChoices(),
        "through Metal's completion-handler API, one pipeline per type choice");

  auto [libraryError, libraryCalls] = AwaitCompletion([&](void (^handler)(NSError* _Nullable)) {
    [kernels prewarmWithCompletionHandler:handler];
  });
  Check(libraryCalls == 1 && libraryError == nil, "the library's asynchronous prewarm completes once, without error");
  const int prewarmed = Created();
  NSError* failure = nil;
  Check([kernels prewarmWithError:&failure] && Created() == prewarmed, "after it, every default pipeline exists");
  Check(EncodeArgmax(kernels.argmax, mtlgen::DType::f32, &failure) && Created() == prewarmed, "an encode then creates none");
}

void TooLargeThreadgroupIsAnError() {
  StubCounts().maxTotalThreadsPerThreadgroup = 16;  // below every tuning of argmax
  MTGKernelLibrary* kernels = Load(NewLibrary());
  const int before = Created();
  NSError* error = nil;
  Check(!EncodeArgmax(kernels.argmax, mtlgen::DType::f32, &error) && error.code == MTGErrorThreadgroupTooLarge &&
            [error.domain isEqual:MTGErrorDomain],
        "an encode whose pipeline admits too few threads fails with MTGErrorThreadgroupTooLarge (" + MTGDescription(error) + ")");
  error = nil;
  Check(!EncodeArgmax(kernels.argmax, mtlgen::DType::f32, &error) && error.code == MTGErrorThreadgroupTooLarge,
        "and again, from the kept failure");
  Check(Created() - before == 1, "having created the pipeline once");
  auto [asyncError, calls] = AwaitCompletion([&](void (^handler)(NSError* _Nullable)) {
    [kernels.argmax prewarmWithCompletionHandler:handler];
  });
  Check(calls == 1 && asyncError.code == MTGErrorThreadgroupTooLarge, "the asynchronous prewarm reports it");
  StubCounts().maxTotalThreadsPerThreadgroup = 1024;
}

// The two-stage argmax into one encoder, or with `split` each dispatch into the encoder it asks for;
// the dispatch indices it asked for, in order.
BOOL EncodeArgmaxTwoStage(MTGArgmaxTwoStage* family, bool split, std::vector<NSUInteger>& asked, NSError** error) {
  const MTGArgmaxTwoStageDims dims{.n = 4096};
  const MTGArgmaxTwoStageTypes types{.T = mtlgen::DType::f32};
  if (!split) {
    return [family encodeToCommandEncoder:[[StubEncoder alloc] init] x:NewBuffer() xOffset:0 blockValues:NewBuffer()
                        blockValuesOffset:0 blockIndices:NewBuffer() blockIndicesOffset:0 out:NewBuffer() outOffset:0
                                     dims:dims types:types error:error];
  }
  std::vector<NSUInteger>* indices = &asked;
  id<MTLComputeCommandEncoder> _Nullable (^encoderFor)(NSUInteger) = ^id<MTLComputeCommandEncoder> _Nullable(NSUInteger dispatch) {
    indices->push_back(dispatch);
    return [[StubEncoder alloc] init];
  };
  return [family encodeWithEncoderForDispatch:encoderFor x:NewBuffer() xOffset:0 blockValues:NewBuffer()
                            blockValuesOffset:0 blockIndices:NewBuffer() blockIndicesOffset:0 out:NewBuffer()
                                    outOffset:0 dims:dims types:types error:error];
}

// What bench_<family> relies on: a token in one encoder, which the glue leaves open, or each
// dispatch in an encoder of its own, asked for by its index and ended by the glue.
void FamilySplitsEncodersOnRequest(MTGKernelLibrary* kernels) {
  std::vector<NSUInteger> asked;
  NSError* error = nil;
  int dispatches = StubCounts().dispatches, ended = StubCounts().encodersEnded;
  Check(EncodeArgmaxTwoStage(kernels.argmaxTwoStage, false, asked, &error), "argmax_two_stage encodes into one encoder", error);
  Check(StubCounts().dispatches - dispatches == 2 && StubCounts().encodersEnded == ended,
        "two dispatches, the caller's encoder left open (" + std::to_string(StubCounts().encodersEnded - ended) + " ended)");
  dispatches = StubCounts().dispatches;
  Check(EncodeArgmaxTwoStage(kernels.argmaxTwoStage, true, asked, &error), "and with an encoder per dispatch", error);
  Check(asked == std::vector<NSUInteger>{0, 1} && StubCounts().dispatches - dispatches == 2 &&
            StubCounts().encodersEnded - ended == 2,
        "it asks for encoders 0 and 1, dispatches once into each and ends both (" +
            std::to_string(StubCounts().encodersEnded - ended) + " ended)");
  asked.clear();
  const BOOL encoded = [kernels.argmaxTwoStage
      encodeWithEncoderForDispatch:^id<MTLComputeCommandEncoder> _Nullable(NSUInteger) { return nil; }
                                 x:NewBuffer() xOffset:0 blockValues:NewBuffer() blockValuesOffset:0
                      blockIndices:NewBuffer() blockIndicesOffset:0 out:NewBuffer() outOffset:0
                              dims:MTGArgmaxTwoStageDims{.n = 4096} types:MTGArgmaxTwoStageTypes{.T = mtlgen::DType::f32}
                             error:&error];
  Check(!encoded && error.code == MTGErrorInvalidBuffer, "no encoder for a dispatch fails the call (" + MTGDescription(error) + ")");
}

void FacadePrewarms() {
  StubLibrary* library = NewLibrary();
  std::string error;
  auto kernel = mtlgen::kernels::rms_norm::RmsNormKernel::create((__bridge void*)library, &error);
  Check(kernel != nullptr, "the C++ facade creates rms_norm" + (error.empty() ? "" : ": " + error));
  const int before = Created();
  Check(kernel->prewarm(&error) && Created() - before == RmsNormTypeChoices(), "and prewarms its default tunings");
  auto other = mtlgen::kernels::argmax::ArgmaxKernel::create((__bridge void*)library, &error);
  std::mutex mutex;
  std::condition_variable done;
  int calls = 0;
  other->prewarm_async([&](const std::string& message) {
    std::lock_guard<std::mutex> lock(mutex);
    error = message;
    ++calls;
    done.notify_all();
  });
  std::unique_lock<std::mutex> lock(mutex);
  done.wait(lock, [&] { return calls > 0; });
  Check(calls == 1 && error.empty(), "prewarm_async calls back once, with no error");
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IONBF, 0);  // every line out before a crash
  @autoreleasepool {
    MTGKernelLibrary* kernels = Load(NewLibrary());
    Check(Created() == 0, "loading the shipped library creates no pipeline (" + std::to_string(Created()) + ")");
    Check(StubCounts().functions == 0, "nor any MTLFunction");
    FirstUseCreatesOnce(kernels);
    PrewarmCreatesWhatItNames(kernels);
    AsyncPrewarmCompletes();
    TooLargeThreadgroupIsAnError();
    FacadePrewarms();
    FamilySplitsEncodersOnRequest(kernels);
  }
  std::printf("%d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}
