// The stub Metal classes of stub_classes.mm: a device whose pipelines are plain objects, counting
// every function, pipeline and dispatch the generated glue asks for.
#pragma once

#import <Foundation/Foundation.h>
#import <Metal/Metal.h>

#include <atomic>
#include <mutex>
#include <set>
#include <string>

struct StubCounters {
  std::atomic<int> functions{0};
  std::atomic<int> pipelines{0};      // synchronous and asynchronous creations
  std::atomic<int> asyncRequests{0};  // newComputePipelineStateWithFunction:completionHandler: calls
  std::atomic<int> dispatches{0};
  std::atomic<int> encodersEnded{0};
  std::atomic<bool> slowCreation{false};  // sleep in each creation, so that racing threads overlap
  NSUInteger maxTotalThreadsPerThreadgroup = 1024;
  std::mutex mutex;
  std::multiset<std::string> created;  // entry points, once per creation

  void noteCreated(const std::string& entryPoint) {
    std::lock_guard<std::mutex> lock(mutex);
    created.insert(entryPoint);
  }
  size_t timesCreated(const std::string& entryPoint) {
    std::lock_guard<std::mutex> lock(mutex);
    return created.count(entryPoint);
  }
};

StubCounters& StubCounts();

NS_ASSUME_NONNULL_BEGIN

@interface MTGHeapString : NSString
- (instancetype)initWithText:(const char*)text;
@end

@interface StubFunction : NSObject <MTLFunction>
@property (nullable, copy, atomic) NSString* label;
@property (readwrite) id<MTLDevice> device;
@property (readwrite) NSString* name;
@end

@interface StubPipeline : NSObject <MTLComputePipelineState>
@property (nullable, readwrite) NSString* label;
@property (readwrite) id<MTLDevice> device;
@property (readwrite) NSUInteger maxTotalThreadsPerThreadgroup;
@property (readwrite) NSUInteger threadExecutionWidth;
@property (readwrite) NSUInteger staticThreadgroupMemoryLength;
@end

@interface StubLibrary : NSObject <MTLLibrary>
@property (nullable, copy, atomic) NSString* label;
@property (readwrite) id<MTLDevice> device;
@property (readwrite) NSArray<NSString*>* functionNames;
@end

@interface StubDevice : NSObject <MTLDevice>
@property (readwrite) NSString* name;
@property (readwrite) NSUInteger maxThreadgroupMemoryLength;
@end

@interface StubBuffer : NSObject <MTLBuffer>
- (instancetype)initWithLength:(NSUInteger)length;
@property (nullable, copy, atomic) NSString* label;
@property (readwrite) id<MTLDevice> device;
@property (readwrite) MTLStorageMode storageMode;
@end

@interface StubEncoder : NSObject <MTLComputeCommandEncoder>
@property (readwrite) id<MTLDevice> device;
@property (nullable, copy, atomic) NSString* label;
@property (readwrite) MTLDispatchType dispatchType;
@end

NS_ASSUME_NONNULL_END
