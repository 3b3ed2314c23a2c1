// Implementations, for running on Linux, of the classes tests/stubs declares: the Foundation the
// generated glue calls (strings, arrays, dictionaries, errors) and a Metal device that creates no
// GPU object but counts what the glue asks of it (stub_classes.h). Test-only, on objc_runtime.cpp.
#import "stub_classes.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

extern "C" {
void* mtg_objc_alloc(const void* cls);
const void* mtg_objc_class_of(const void* object);
const void* mtg_objc_superclass(const void* cls);
}

StubCounters& StubCounts() {
  static StubCounters counts;
  return counts;
}

@implementation NSObject
+ (instancetype)alloc {
  return (__bridge id)mtg_objc_alloc((__bridge const void*)self);
}
+ (instancetype)new {
  return [[self alloc] init];
}
+ (Class)class {
  return self;
}
- (instancetype)init {
  return self;
}
- (BOOL)isEqual:(id)object {
  return self == object;
}
- (NSUInteger)hash {
  return reinterpret_cast<uintptr_t>((__bridge const void*)self);
}
- (BOOL)isKindOfClass:(Class)aClass {
  for (const void* c = mtg_objc_class_of((__bridge const void*)self); c != nullptr; c = mtg_objc_superclass(c)) {
    if (c == (__bridge const void*)aClass) return YES;
  }
  return NO;
}
- (NSString*)description {
  return @"<object>";
}
- (id)copyWithZone:(NSZone*)zone {
  (void)zone;
  return self;
}
@end

// --- Strings: constant (clang's layout), tagged (short literals), and made at run time ----------

@implementation NSString
+ (instancetype)stringWithUTF8String:(const char*)text {
  return [[MTGHeapString alloc] initWithText:text];
}
- (const char*)UTF8String {
  return "";
}
- (NSUInteger)length {
  return std::strlen(self.UTF8String);
}
- (BOOL)isEqual:(id)object {
  return [object isKindOfClass:[NSString class]] && [self isEqualToString:(NSString*)object];
}
- (BOOL)isEqualToString:(NSString*)other {
  return std::strcmp(self.UTF8String, other.UTF8String) == 0;
}
- (NSUInteger)hash {
  return std::hash<std::string>()(self.UTF8String);
}
- (NSString*)stringByAppendingString:(NSString*)other {
  return [[MTGHeapString alloc] initWithText:(std::string(self.UTF8String) + other.UTF8String).c_str()];
}
- (NSString*)description {
  return self;
}
@end

@interface NSConstantString : NSString
@end
@implementation NSConstantString {
  uint32_t _flags, _length, _size, _hash;
  const char* _data;
}
- (const char*)UTF8String {
  return _data;
}
@end

// Literals of up to 8 ASCII characters are pointers: tag 4 in bits 0-2, the length in bits 3-6,
// then 7 bits per character from the top.
@interface MTGTaggedString : NSString
@end
@implementation MTGTaggedString
- (const char*)UTF8String {
  const auto bits = reinterpret_cast<uintptr_t>((__bridge const void*)self);
  const size_t length = (bits >> 3) & 15;
  char* text = static_cast<char*>(std::calloc(length + 1, 1));  // leaked, like every object here
  for (size_t i = 0; i < length; ++i) text[i] = static_cast<char>((bits >> (64 - 7 * (i + 1))) & 0x7f);
  return text;
}
@end

@implementation MTGHeapString {
  std::string _text;
}
- (instancetype)initWithText:(const char*)text {
  _text = text;
  return self;
}
- (const char*)UTF8String {
  return _text.c_str();
}
@end

NSErrorUserInfoKey const NSLocalizedDescriptionKey = @"NSLocalizedDescription";
NSErrorUserInfoKey const NSUnderlyingErrorKey = @"NSUnderlyingError";

// --- Collections ---------------------------------------------------------------------------------

namespace {
unsigned long kNeverMutated = 0;

NSUInteger Enumerate(NSFastEnumerationState* state, __unsafe_unretained id* buffer, NSUInteger length,
                     const std::vector<id>& items) {
  NSUInteger n = 0;
  while (n < length && state->state < items.size()) buffer[n++] = items[state->state++];
  state->itemsPtr = buffer;
  state->mutationsPtr = &kNeverMutated;
  return n;
}
}  // namespace

@implementation NSArray {
 @protected
  std::vector<id> _items;
}
+ (instancetype)arrayWithObjects:(const id _Nonnull[_Nonnull])objects count:(NSUInteger)count {
  NSArray* array = [[self alloc] init];
  array->_items.assign(objects, objects + count);
  return array;
}
- (NSUInteger)count {
  return _items.size();
}
- (id)objectAtIndex:(NSUInteger)index {
  return _items.at(index);
}
- (id)objectAtIndexedSubscript:(NSUInteger)index {
  return _items.at(index);
}
- (NSUInteger)countByEnumeratingWithState:(NSFastEnumerationState*)state
                                  objects:(id __unsafe_unretained _Nullable[_Nonnull])buffer
                                    count:(NSUInteger)length {
  return Enumerate(state, buffer, length, _items);
}
@end

@implementation NSMutableArray
+ (instancetype)array {
  return [[self alloc] init];
}
+ (instancetype)arrayWithCapacity:(NSUInteger)capacity {
  NSMutableArray* array = [[self alloc] init];
  array->_items.reserve(capacity);
  return array;
}
- (void)addObject:(id)object {
  _items.push_back(object);
}
@end

@implementation NSDictionary {
 @protected
  std::vector<id> _keys, _values;
}
+ (instancetype)dictionaryWithObjects:(const id _Nonnull[_Nullable])objects
                              forKeys:(const id<NSCopying> _Nonnull[_Nullable])keys
                                count:(NSUInteger)count {
  NSDictionary* dictionary = [[self alloc] init];
  dictionary->_keys.assign(keys, keys + count);
  dictionary->_values.assign(objects, objects + count);
  return dictionary;
}
- (NSUInteger)count {
  return _keys.size();
}
- (id)objectForKey:(id)key {
  for (size_t i = 0; i < _keys.size(); ++i) {
    if ([_keys[i] isEqual:key]) return _values[i];
  }
  return nil;
}
- (id)objectForKeyedSubscript:(id)key {
  return [self objectForKey:key];
}
- (NSUInteger)countByEnumeratingWithState:(NSFastEnumerationState*)state
                                  objects:(id __unsafe_unretained _Nullable[_Nonnull])buffer
                                    count:(NSUInteger)length {
  return Enumerate(state, buffer, length, _keys);
}
@end

@implementation NSMutableDictionary
+ (instancetype)dictionary {
  return [[self alloc] init];
}
- (void)setObject:(id)object forKeyedSubscript:(id<NSCopying>)key {
  _keys.push_back(key);
  _values.push_back(object);
}
@end

@implementation NSError {
  NSErrorDomain _domain;
  NSInteger _code;
  NSDictionary* _userInfo;
}
+ (instancetype)errorWithDomain:(NSErrorDomain)domain code:(NSInteger)code userInfo:(NSDictionary*)userInfo {
  NSError* error = [[self alloc] init];
  error->_domain = domain;
  error->_code = code;
  error->_userInfo = userInfo;
  return error;
}
- (NSErrorDomain)domain {
  return _domain;
}
- (NSInteger)code {
  return _code;
}
- (NSDictionary*)userInfo {
  return _userInfo;
}
- (NSString*)localizedDescription {
  NSString* description = _userInfo[NSLocalizedDescriptionKey];
  return description != nil ? description : @"error";
}
@end

// Classes the glue names on paths these tests do not take (tuning files, capture, run-time
// compilation): present so that it links; a message to one aborts in the runtime.
@implementation NSNumber
@end
@implementation NSData
@end
@implementation NSJSONSerialization
@end
@implementation NSURL
@end
@implementation MTLCompileOptions
@synthesize fastMathEnabled, mathMode, languageVersion;
@end
@implementation MTLFunctionConstantValues
- (void)setConstantValue:(const void*)value type:(MTLDataType)type atIndex:(NSUInteger)index {
  (void)value, (void)type, (void)index;
}
@end

// Frame capture (support/mtlgen_capture.mm) is not under test: nothing is watched.
namespace mtlgen::capture {
bool watches(const char*) { return false; }
void note_dispatch(const char*) {}
}  // namespace mtlgen::capture

dispatch_data_t dispatch_data_create(const void*, size_t, dispatch_queue_t, dispatch_block_t) { return nil; }

// --- Metal: a device that counts -----------------------------------------------------------------

@implementation StubFunction
@synthesize label, device, name;
@end

@implementation StubPipeline
@synthesize label, device, maxTotalThreadsPerThreadgroup, threadExecutionWidth, staticThreadgroupMemoryLength;
@end

@implementation StubLibrary
@synthesize label, device, functionNames;
- (id<MTLFunction>)newFunctionWithName:(NSString*)functionName {
  ++StubCounts().functions;
  StubFunction* function = [[StubFunction alloc] init];
  function.name = functionName;
  function.device = self.device;
  return function;
}
- (id<MTLFunction>)newFunctionWithName:(NSString*)name
                        constantValues:(MTLFunctionConstantValues*)constantValues
                                 error:(NSError* __autoreleasing*)error {
  (void)constantValues, (void)error;
  return [self newFunctionWithName:name];
}
@end

@implementation StubDevice
@synthesize name, maxThreadgroupMemoryLength;
- (nullable NSArray<id<MTLCounterSet>>*)counterSets {
  return nil;  // samples no counters: the glue never asks, only bench_<family>
}
- (StubPipeline*)makePipeline:(id<MTLFunction>)function {
  if (StubCounts().slowCreation) std::this_thread::sleep_for(std::chrono::milliseconds(20));  // widens races
  ++StubCounts().pipelines;
  StubCounts().noteCreated(function.name.UTF8String);
  StubPipeline* pipeline = [[StubPipeline alloc] init];
  pipeline.device = self;
  pipeline.maxTotalThreadsPerThreadgroup = StubCounts().maxTotalThreadsPerThreadgroup;
  pipeline.threadExecutionWidth = 32;
  return pipeline;
}
- (id<MTLComputePipelineState>)newComputePipelineStateWithFunction:(id<MTLFunction>)function
                                                              error:(NSError* __autoreleasing*)error {
  (void)error;
  return [self makePipeline:function];
}
// As Metal does, on a thread of its own.
- (void)newComputePipelineStateWithFunction:(id<MTLFunction>)function
                          completionHandler:(MTLNewComputePipelineStateCompletionHandler)completionHandler {
  ++StubCounts().asyncRequests;
  std::thread([self, function, completionHandler] { completionHandler([self makePipeline:function], nil); }).detach();
}
@end

@implementation StubBuffer {
  std::vector<uint8_t> _bytes;
}
@synthesize label, device, storageMode;
- (instancetype)initWithLength:(NSUInteger)length {
  _bytes.resize(length);
  return self;
}
- (NSUInteger)length {
  return _bytes.size();
}
- (void*)contents {
  return _bytes.data();
}
@end

@implementation StubEncoder
@synthesize device, label, dispatchType;
- (void)setComputePipelineState:(id<MTLComputePipelineState>)state {
  (void)state;
}
- (void)setBytes:(const void*)bytes length:(NSUInteger)length atIndex:(NSUInteger)index {
  (void)bytes, (void)length, (void)index;
}
- (void)setBuffer:(id<MTLBuffer>)buffer offset:(NSUInteger)offset atIndex:(NSUInteger)index {
  (void)buffer, (void)offset, (void)index;
}
- (void)setThreadgroupMemoryLength:(NSUInteger)length atIndex:(NSUInteger)index {
  (void)length, (void)index;
}
- (void)dispatchThreadgroups:(MTLSize)threadgroupsPerGrid threadsPerThreadgroup:(MTLSize)threadsPerThreadgroup {
  (void)threadgroupsPerGrid, (void)threadsPerThreadgroup;
  ++StubCounts().dispatches;
}
- (void)memoryBarrierWithResources:(const id<MTLResource> _Nonnull[_Nonnull])resources count:(NSUInteger)count {
  (void)resources, (void)count;
}
- (void)endEncoding {
  ++StubCounts().encodersEnded;
}
@end
