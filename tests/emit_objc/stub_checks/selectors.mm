// Proves that the stubs in tests/stubs catch misspellings. Compiled as is, it must pass: every
// selector below is declared in the stubs with Apple's spelling. Compiled with one of the
// MTG_MISSPELL_* macros, it must fail and name the misspelled selector or property.
#import <Foundation/Foundation.h>
#import <Metal/Metal.h>

void Encode(id<MTLLibrary> library, id<MTLComputeCommandEncoder> encoder, id<MTLBuffer> buffer) {
  NSError* error = nil;
  id<MTLFunction> function = [library newFunctionWithName:@"kernel_f32"];
  if (function == nil) return;
  id<MTLComputePipelineState> pipeline = [library.device newComputePipelineStateWithFunction:function error:&error];
  if (pipeline == nil) return;
  // Prewarm: Metal's asynchronous creation.
#if defined(MTG_MISSPELL_COMPLETION)
  [library.device newComputePipelineStateWithFunction:function completionHandle:^(id<MTLComputePipelineState>, NSError*) {}];
#else
  [library.device newComputePipelineStateWithFunction:function
                                    completionHandler:^(id<MTLComputePipelineState> _Nullable, NSError* _Nullable) {}];
#endif
  const uint32_t params[2] = {1, 2};
  [encoder setComputePipelineState:pipeline];
#if defined(MTG_MISSPELL_SELECTOR)
  [encoder setBufer:buffer offset:0 atIndex:0];
#else
  [encoder setBuffer:buffer offset:0 atIndex:0];
#endif
  [encoder setBytes:params length:sizeof(params) atIndex:1];
  [encoder setThreadgroupMemoryLength:16 atIndex:0];
#if defined(MTG_MISSPELL_PROPERTY)
  const NSUInteger threads = pipeline.maxTotalThreadsPerThreadGroup;
#else
  const NSUInteger threads = pipeline.maxTotalThreadsPerThreadgroup;
#endif
#if defined(MTG_MISSPELL_KEYWORD)
  [encoder dispatchThreadgroups:MTLSizeMake(1, 1, 1) threadsPerThreadGroup:MTLSizeMake(threads, 1, 1)];
#else
  [encoder dispatchThreadgroups:MTLSizeMake(1, 1, 1) threadsPerThreadgroup:MTLSizeMake(threads, 1, 1)];
#endif
  // Kernel families: barriers between dependent dispatches of a concurrent encoder.
#if defined(MTG_MISSPELL_DISPATCH_TYPE)
  if (encoder.dispatchType == MTLDispatchTypeConcurent) {
#else
  if (encoder.dispatchType == MTLDispatchTypeConcurrent) {
#endif
    const id<MTLResource> resources[] = {buffer};
#if defined(MTG_MISSPELL_BARRIER)
    [encoder memoryBarrierWithResource:resources count:1];
#else
    [encoder memoryBarrierWithResources:resources count:1];
#endif
    [encoder memoryBarrierWithScope:MTLBarrierScopeBuffers];
  }
}

// The runtime's Apple API: command buffers, timing, library loading, capture, Foundation.
BOOL Run(id<MTLDevice> device, id<MTLCommandQueue> queue, NSString* path) {
  NSError* error = nil;
  MTLCompileOptions* options = [[MTLCompileOptions alloc] init];
  options.languageVersion = MTLLanguageVersion3_1;
#if defined(MTG_MISSPELL_MATH_MODE)
  options.mathmode = MTLMathModeSafe;
#else
  options.mathMode = MTLMathModeSafe;
#endif
  id<MTLLibrary> library = [device newLibraryWithSource:@"" options:options error:&error];
  if (library == nil || library.functionNames.count == 0) return NO;
  id<MTLCommandBuffer> commandBuffer = [queue commandBuffer];
  id<MTLComputeCommandEncoder> concurrent = [commandBuffer computeCommandEncoderWithDispatchType:MTLDispatchTypeConcurrent];
  [concurrent endEncoding];
  [commandBuffer commit];
  [commandBuffer waitUntilCompleted];
#if defined(MTG_MISSPELL_STATUS)
  if (commandBuffer.status == MTLCommandBufferStatusFailed) return NO;
#else
  if (commandBuffer.status == MTLCommandBufferStatusError) return NO;
#endif
#if defined(MTG_MISSPELL_GPU_TIME)
  const CFTimeInterval seconds = commandBuffer.GPUEndTime - commandBuffer.GPUStartTme;
#else
  const CFTimeInterval seconds = commandBuffer.GPUEndTime - commandBuffer.GPUStartTime;
#endif
  MTLCaptureManager* manager = [MTLCaptureManager sharedCaptureManager];
  MTLCaptureDescriptor* descriptor = [[MTLCaptureDescriptor alloc] init];
  descriptor.captureObject = device;
  descriptor.destination = MTLCaptureDestinationGPUTraceDocument;
  descriptor.outputURL = [NSURL fileURLWithPath:path];
#if defined(MTG_MISSPELL_CAPTURE)
  if (![manager startCaptureWithDescriptor:descriptor eror:&error]) return NO;
#else
  if (![manager startCaptureWithDescriptor:descriptor error:&error]) return NO;
#endif
  [manager stopCapture];
  NSData* data = [NSData dataWithContentsOfFile:path options:0 error:&error];
#if defined(MTG_MISSPELL_JSON)
  id root = [NSJSONSerialization JSONObjectFromData:data options:0 error:&error];
#else
  id root = [NSJSONSerialization JSONObjectWithData:data options:0 error:&error];
#endif
  return root != nil && seconds >= 0;
}

// What bench_<family> times each dispatch with: timestamps at the start and end of an encoder.
uint64_t EncoderTicks(id<MTLDevice> device, id<MTLCommandBuffer> commandBuffer, id<MTLCounterSet> timestamps) {
  if (![device supportsCounterSampling:MTLCounterSamplingPointAtStageBoundary] ||
      ![timestamps.name isEqualToString:MTLCommonCounterSetTimestamp]) {
    return 0;
  }
  MTLCounterSampleBufferDescriptor* descriptor = [[MTLCounterSampleBufferDescriptor alloc] init];
  descriptor.counterSet = timestamps;
  descriptor.storageMode = MTLStorageModeShared;
  descriptor.sampleCount = 2;
  NSError* error = nil;
  id<MTLCounterSampleBuffer> samples = [device newCounterSampleBufferWithDescriptor:descriptor error:&error];
  if (samples == nil) return 0;
  MTLComputePassDescriptor* pass = [MTLComputePassDescriptor computePassDescriptor];
  pass.sampleBufferAttachments[0].sampleBuffer = samples;
#if defined(MTG_MISSPELL_SAMPLE_INDEX)
  pass.sampleBufferAttachments[0].startOfEncoderSampleIdx = 0;
#else
  pass.sampleBufferAttachments[0].startOfEncoderSampleIndex = 0;
#endif
  pass.sampleBufferAttachments[0].endOfEncoderSampleIndex = 1;
  [[commandBuffer computeCommandEncoderWithDescriptor:pass] endEncoding];
  MTLTimestamp cpu = 0, gpu = 0;
  [device sampleTimestamps:&cpu gpuTimestamp:&gpu];
#if defined(MTG_MISSPELL_RESOLVE)
  NSData* resolved = [samples resolveCounters:NSMakeRange(0, 2)];
#else
  NSData* resolved = [samples resolveCounterRange:NSMakeRange(0, 2)];
#endif
  if (resolved == nil) return 0;
  const auto* stamps = static_cast<const MTLCounterResultTimestamp*>(resolved.bytes);
  return stamps[0].timestamp == MTLCounterErrorValue ? 0 : stamps[1].timestamp - stamps[0].timestamp;
}
