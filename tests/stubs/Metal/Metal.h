// Stub of Apple's <Metal/Metal.h> for syntax-checking generated Objective-C++ on Linux: the
// protocols, classes, types and selectors mtlgen's glue uses, spelled and typed as in the macOS
// 14 SDK (MTLTypes.h, MTLDevice.h, MTLLibrary.h, MTLComputePipeline.h, MTLResource.h, MTLBuffer.h,
// MTLCommandEncoder.h, MTLComputeCommandEncoder.h, MTLArgument.h, MTLFunctionConstantValues.h).
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

// MTLFunctionConstantValues.h
@interface MTLFunctionConstantValues : NSObject <NSCopying>
- (void)setConstantValue:(const void*)value type:(MTLDataType)type atIndex:(NSUInteger)index;
- (void)setConstantValue:(const void*)value type:(MTLDataType)type withName:(NSString*)name;
- (void)reset;
@end

// MTLLibrary.h
@protocol MTLFunction <NSObject>
@property (nullable, copy, atomic) NSString* label;
@property (readonly) id<MTLDevice> device;
@property (readonly) NSString* name;
@end

@protocol MTLLibrary <NSObject>
@property (nullable, copy, atomic) NSString* label;
@property (readonly) id<MTLDevice> device;
- (nullable id<MTLFunction>)newFunctionWithName:(NSString*)functionName;
- (nullable id<MTLFunction>)newFunctionWithName:(NSString*)name
                                  constantValues:(MTLFunctionConstantValues*)constantValues
                                           error:(__autoreleasing NSError**)error;
@end

// MTLDevice.h
@protocol MTLDevice <NSObject>
@property (readonly) NSString* name;
@property (readonly) NSUInteger maxThreadgroupMemoryLength;
- (nullable id<MTLComputePipelineState>)newComputePipelineStateWithFunction:(id<MTLFunction>)computeFunction
                                                                       error:(__autoreleasing NSError**)error;
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
@end

@protocol MTLBuffer <MTLResource>
@property (readonly) NSUInteger length;
- (void*)contents NS_RETURNS_INNER_POINTER;
@end

// MTLCommandEncoder.h, MTLComputeCommandEncoder.h
@protocol MTLCommandEncoder <NSObject>
@property (readonly) id<MTLDevice> device;
@property (nullable, copy, atomic) NSString* label;
- (void)endEncoding;
- (void)insertDebugSignpost:(NSString*)string;
- (void)pushDebugGroup:(NSString*)string;
- (void)popDebugGroup;
@end

@protocol MTLComputeCommandEncoder <MTLCommandEncoder>
- (void)setComputePipelineState:(id<MTLComputePipelineState>)state;
- (void)setBytes:(const void*)bytes length:(NSUInteger)length atIndex:(NSUInteger)index;
- (void)setBuffer:(nullable id<MTLBuffer>)buffer offset:(NSUInteger)offset atIndex:(NSUInteger)index;
- (void)setBufferOffset:(NSUInteger)offset atIndex:(NSUInteger)index;
- (void)setThreadgroupMemoryLength:(NSUInteger)length atIndex:(NSUInteger)index;
- (void)dispatchThreadgroups:(MTLSize)threadgroupsPerGrid threadsPerThreadgroup:(MTLSize)threadsPerThreadgroup;
- (void)dispatchThreads:(MTLSize)threadsPerGrid threadsPerThreadgroup:(MTLSize)threadsPerThreadgroup;
@end

NS_ASSUME_NONNULL_END
