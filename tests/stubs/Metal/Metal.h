// Stub of Apple's <Metal/Metal.h> for syntax-checking generated Objective-C++ on Linux: the
// protocols, classes, types and selectors mtlgen's glue uses, spelled and typed as in the macOS
// 15 SDK (MTLTypes.h, MTLDevice.h, MTLLibrary.h, MTLComputePipeline.h, MTLResource.h, MTLBuffer.h,
// MTLCommandQueue.h, MTLCommandBuffer.h, MTLCommandEncoder.h, MTLComputeCommandEncoder.h,
// MTLBlitCommandEncoder.h, MTLArgument.h, MTLFunctionConstantValues.h, MTLCaptureManager.h,
// MTLCounters.h, MTLComputePass.h).
// Anything not declared here is, to the check, a misspelling.
#pragma once

#import <Foundation/Foundation.h>

NS_ASSUME_NONNULL_BEGIN

// MTLTypes.h
typedef struct {
  NSUInteger width, height, depth;
} MTLSize;

static inline MTLSize MTLSizeMake(NSUInteger width, NSUInteger height, NSUInteger depth) {
  MTLSize size = {width, height, depth};
  return size;
}

// MTLArgument.h (the scalar types function constants can have)
typedef NS_ENUM(NSUInteger, MTLDataType) {
  MTLDataTypeFloat = 3,
  MTLDataTypeHalf = 16,
  MTLDataTypeInt = 29,
  MTLDataTypeUInt = 33,
  MTLDataTypeShort = 37,
  MTLDataTypeUShort = 41,
  MTLDataTypeChar = 45,
  MTLDataTypeUChar = 49,
  MTLDataTypeBool = 53,
  MTLDataTypeBFloat = 121,
};

@protocol MTLDevice;
@protocol MTLFunction;
@protocol MTLComputePipelineState;
@protocol MTLCommandQueue;
@protocol MTLCommandBuffer;
@protocol MTLComputeCommandEncoder;
@protocol MTLBlitCommandEncoder;
@protocol MTLBuffer;

// MTLResource.h
typedef NS_ENUM(NSUInteger, MTLStorageMode) {
  MTLStorageModeShared = 0,
  MTLStorageModeManaged = 1,
  MTLStorageModePrivate = 2,
  MTLStorageModeMemoryless = 3,
};

typedef NS_OPTIONS(NSUInteger, MTLResourceOptions) {
  MTLResourceCPUCacheModeDefaultCache = 0,
  MTLResourceStorageModeShared = MTLStorageModeShared << 4,
  MTLResourceStorageModeManaged = MTLStorageModeManaged << 4,
  MTLResourceStorageModePrivate = MTLStorageModePrivate << 4,
};

// MTLFunctionConstantValues.h
@interface MTLFunctionConstantValues : NSObject <NSCopying>
- (void)setConstantValue:(const void*)value type:(MTLDataType)type atIndex:(NSUInteger)index;
- (void)setConstantValue:(const void*)value type:(MTLDataType)type withName:(NSString*)name;
- (void)reset;
@end

// MTLLibrary.h
typedef NS_ENUM(NSUInteger, MTLLanguageVersion) {
  MTLLanguageVersion2_0 = (2 << 16),
  MTLLanguageVersion2_1 = (2 << 16) + 1,
  MTLLanguageVersion2_2 = (2 << 16) + 2,
  MTLLanguageVersion2_3 = (2 << 16) + 3,
  MTLLanguageVersion2_4 = (2 << 16) + 4,
  MTLLanguageVersion3_0 = (3 << 16) + 0,
  MTLLanguageVersion3_1 = (3 << 16) + 1,
  MTLLanguageVersion3_2 = (3 << 16) + 2,
};

typedef NS_ENUM(NSInteger, MTLMathMode) {
  MTLMathModeSafe = 0,
  MTLMathModeRelaxed = 1,
  MTLMathModeFast = 2,
} API_AVAILABLE(macos(15.0));

@interface MTLCompileOptions : NSObject <NSCopying>
@property (readwrite, nonatomic) BOOL fastMathEnabled API_DEPRECATED("Use mathMode instead", macos(10.11, 15.0));
@property (readwrite, nonatomic) MTLMathMode mathMode API_AVAILABLE(macos(15.0));
@property (readwrite, nonatomic) MTLLanguageVersion languageVersion;
@end

@protocol MTLFunction <NSObject>
@property (nullable, copy, atomic) NSString* label;
@property (readonly) id<MTLDevice> device;
@property (readonly) NSString* name;
@end

@protocol MTLLibrary <NSObject>
@property (nullable, copy, atomic) NSString* label;
@property (readonly) id<MTLDevice> device;
@property (readonly) NSArray<NSString*>* functionNames;
- (nullable id<MTLFunction>)newFunctionWithName:(NSString*)functionName;
- (nullable id<MTLFunction>)newFunctionWithName:(NSString*)name
                                  constantValues:(MTLFunctionConstantValues*)constantValues
                                           error:(__autoreleasing NSError**)error;
@end

// MTLDevice.h
id<MTLDevice> _Nullable MTLCreateSystemDefaultDevice(void);

// MTLCounters.h (timestamps sampled into counter sample buffers)
typedef NSString* MTLCommonCounterSet NS_TYPED_EXTENSIBLE_ENUM;
extern MTLCommonCounterSet const MTLCommonCounterSetTimestamp;

typedef struct {
  uint64_t timestamp;
} MTLCounterResultTimestamp;

#define MTLCounterErrorValue ((uint64_t)-1)

@protocol MTLCounterSet <NSObject>
@property (readonly) NSString* name;
@end

@interface MTLCounterSampleBufferDescriptor : NSObject <NSCopying>
@property (readwrite, retain) id<MTLCounterSet> counterSet;
@property (readwrite, copy) NSString* label;
@property (readwrite) MTLStorageMode storageMode;
@property (readwrite) NSUInteger sampleCount;
@end

@protocol MTLCounterSampleBuffer <NSObject>
@property (readonly) id<MTLDevice> device;
@property (readonly) NSString* label;
@property (readonly) NSUInteger sampleCount;
- (nullable NSData*)resolveCounterRange:(NSRange)range;
@end

// MTLDevice.h
typedef NS_ENUM(NSUInteger, MTLCounterSamplingPoint) {
  MTLCounterSamplingPointAtStageBoundary,
  MTLCounterSamplingPointAtDrawBoundary,
  MTLCounterSamplingPointAtDispatchBoundary,
  MTLCounterSamplingPointAtTileDispatchBoundary,
  MTLCounterSamplingPointAtBlitBoundary,
};

typedef uint64_t MTLTimestamp;

@protocol MTLLibrary;
typedef void (^MTLNewComputePipelineStateCompletionHandler)(id<MTLComputePipelineState> _Nullable computePipelineState,
                                                            NSError* _Nullable error);
@protocol MTLDevice <NSObject>
@property (readonly) NSString* name;
@property (readonly) NSUInteger maxThreadgroupMemoryLength;
- (nullable id<MTLLibrary>)newLibraryWithURL:(NSURL*)url error:(__autoreleasing NSError**)error;
- (nullable id<MTLLibrary>)newLibraryWithData:(dispatch_data_t)data error:(__autoreleasing NSError**)error;
- (nullable id<MTLLibrary>)newLibraryWithSource:(NSString*)source
                                        options:(nullable MTLCompileOptions*)options
                                          error:(__autoreleasing NSError**)error;
- (nullable id<MTLCommandQueue>)newCommandQueue;
- (nullable id<MTLBuffer>)newBufferWithLength:(NSUInteger)length options:(MTLResourceOptions)options;
- (nullable id<MTLBuffer>)newBufferWithBytes:(const void*)pointer
                                      length:(NSUInteger)length
                                     options:(MTLResourceOptions)options;
- (nullable id<MTLComputePipelineState>)newComputePipelineStateWithFunction:(id<MTLFunction>)computeFunction
                                                                       error:(__autoreleasing NSError**)error;
- (void)newComputePipelineStateWithFunction:(id<MTLFunction>)computeFunction
                          completionHandler:(MTLNewComputePipelineStateCompletionHandler)completionHandler;
@property (readonly, nullable) NSArray<id<MTLCounterSet>>* counterSets;
- (nullable id<MTLCounterSampleBuffer>)newCounterSampleBufferWithDescriptor:(MTLCounterSampleBufferDescriptor*)descriptor
                                                                       error:(NSError**)error;
- (void)sampleTimestamps:(MTLTimestamp*)cpuTimestamp gpuTimestamp:(MTLTimestamp*)gpuTimestamp;
- (BOOL)supportsCounterSampling:(MTLCounterSamplingPoint)samplingPoint;
@end

// MTLComputePipeline.h
@protocol MTLComputePipelineState <NSObject>
@property (nullable, readonly) NSString* label;
@property (readonly) id<MTLDevice> device;
@property (readonly) NSUInteger maxTotalThreadsPerThreadgroup;
@property (readonly) NSUInteger threadExecutionWidth;
@property (readonly) NSUInteger staticThreadgroupMemoryLength;
@end

// MTLResource.h, MTLBuffer.h
@protocol MTLResource <NSObject>
@property (nullable, copy, atomic) NSString* label;
@property (readonly) id<MTLDevice> device;
@property (readonly) MTLStorageMode storageMode;
@end

@protocol MTLBuffer <MTLResource>
@property (readonly) NSUInteger length;
- (void*)contents NS_RETURNS_INNER_POINTER;
- (void)didModifyRange:(NSRange)range;
@end

// MTLCommandEncoder.h, MTLComputeCommandEncoder.h
typedef NS_OPTIONS(NSUInteger, MTLBarrierScope) {
  MTLBarrierScopeBuffers = 1 << 0,
  MTLBarrierScopeTextures = 1 << 1,
  MTLBarrierScopeRenderTargets = 1 << 2,
};

// MTLCommandBuffer.h
typedef NS_ENUM(NSUInteger, MTLDispatchType) {
  MTLDispatchTypeSerial,
  MTLDispatchTypeConcurrent,
};

@protocol MTLCommandEncoder <NSObject>
@property (readonly) id<MTLDevice> device;
@property (nullable, copy, atomic) NSString* label;
- (void)endEncoding;
- (void)insertDebugSignpost:(NSString*)string;
- (void)pushDebugGroup:(NSString*)string;
- (void)popDebugGroup;
@end

@protocol MTLComputeCommandEncoder <MTLCommandEncoder>
@property (readonly) MTLDispatchType dispatchType;
- (void)setComputePipelineState:(id<MTLComputePipelineState>)state;
- (void)setBytes:(const void*)bytes length:(NSUInteger)length atIndex:(NSUInteger)index;
- (void)setBuffer:(nullable id<MTLBuffer>)buffer offset:(NSUInteger)offset atIndex:(NSUInteger)index;
- (void)setBufferOffset:(NSUInteger)offset atIndex:(NSUInteger)index;
- (void)setThreadgroupMemoryLength:(NSUInteger)length atIndex:(NSUInteger)index;
- (void)dispatchThreadgroups:(MTLSize)threadgroupsPerGrid threadsPerThreadgroup:(MTLSize)threadsPerThreadgroup;
- (void)dispatchThreads:(MTLSize)threadsPerGrid threadsPerThreadgroup:(MTLSize)threadsPerThreadgroup;
- (void)memoryBarrierWithScope:(MTLBarrierScope)scope;
- (void)memoryBarrierWithResources:(const id<MTLResource> _Nonnull[_Nonnull])resources count:(NSUInteger)count;
@end

@protocol MTLBlitCommandEncoder <MTLCommandEncoder>
- (void)copyFromBuffer:(id<MTLBuffer>)sourceBuffer
          sourceOffset:(NSUInteger)sourceOffset
              toBuffer:(id<MTLBuffer>)destinationBuffer
     destinationOffset:(NSUInteger)destinationOffset
                  size:(NSUInteger)size;
@end

// MTLCommandBuffer.h, MTLCommandQueue.h
typedef NS_ENUM(NSUInteger, MTLCommandBufferStatus) {
  MTLCommandBufferStatusNotEnqueued = 0,
  MTLCommandBufferStatusEnqueued = 1,
  MTLCommandBufferStatusCommitted = 2,
  MTLCommandBufferStatusScheduled = 3,
  MTLCommandBufferStatusCompleted = 4,
  MTLCommandBufferStatusError = 5,
};

// MTLComputePass.h
@interface MTLComputePassSampleBufferAttachmentDescriptor : NSObject <NSCopying>
@property (nullable, nonatomic, retain) id<MTLCounterSampleBuffer> sampleBuffer;
@property (nonatomic) NSUInteger startOfEncoderSampleIndex;
@property (nonatomic) NSUInteger endOfEncoderSampleIndex;
@end

@interface MTLComputePassSampleBufferAttachmentDescriptorArray : NSObject
- (MTLComputePassSampleBufferAttachmentDescriptor*)objectAtIndexedSubscript:(NSUInteger)attachmentIndex;
- (void)setObject:(nullable MTLComputePassSampleBufferAttachmentDescriptor*)attachment
    atIndexedSubscript:(NSUInteger)attachmentIndex;
@end

@interface MTLComputePassDescriptor : NSObject <NSCopying>
+ (MTLComputePassDescriptor*)computePassDescriptor;
@property (nonatomic) MTLDispatchType dispatchType;
@property (readonly) MTLComputePassSampleBufferAttachmentDescriptorArray* sampleBufferAttachments;
@end

@protocol MTLCommandBuffer <NSObject>
@property (readonly) id<MTLDevice> device;
@property (readonly) id<MTLCommandQueue> commandQueue;
@property (nullable, copy, atomic) NSString* label;
@property (readonly) MTLCommandBufferStatus status;
@property (nullable, readonly) NSError* error;
@property (readonly) CFTimeInterval GPUStartTime;
@property (readonly) CFTimeInterval GPUEndTime;
- (void)commit;
- (void)waitUntilCompleted;
- (nullable id<MTLComputeCommandEncoder>)computeCommandEncoder;
- (nullable id<MTLComputeCommandEncoder>)computeCommandEncoderWithDispatchType:(MTLDispatchType)dispatchType;
- (nullable id<MTLComputeCommandEncoder>)computeCommandEncoderWithDescriptor:(MTLComputePassDescriptor*)computePassDescriptor;
- (nullable id<MTLBlitCommandEncoder>)blitCommandEncoder;
@end

@protocol MTLCommandQueue <NSObject>
@property (nullable, copy, atomic) NSString* label;
@property (readonly) id<MTLDevice> device;
- (nullable id<MTLCommandBuffer>)commandBuffer;
@end

// MTLCaptureManager.h
typedef NS_ENUM(NSInteger, MTLCaptureDestination) {
  MTLCaptureDestinationDeveloperTools = 1,
  MTLCaptureDestinationGPUTraceDocument = 2,
};

@interface MTLCaptureDescriptor : NSObject <NSCopying>
@property (nullable, strong) id captureObject;
@property (assign) MTLCaptureDestination destination;
@property (nullable, copy) NSURL* outputURL;
@end

@interface MTLCaptureManager : NSObject
+ (MTLCaptureManager*)sharedCaptureManager;
- (instancetype)init NS_UNAVAILABLE;
- (BOOL)supportsDestination:(MTLCaptureDestination)destination;
- (BOOL)startCaptureWithDescriptor:(MTLCaptureDescriptor*)descriptor error:(__autoreleasing NSError**)error;
- (void)stopCapture;
@property (readonly) BOOL isCapturing;
@end

NS_ASSUME_NONNULL_END
