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
}
