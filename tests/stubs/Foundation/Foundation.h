// Stub of Apple's <Foundation/Foundation.h> for syntax-checking generated Objective-C++ on Linux.
// It declares, with Apple's own spellings and signatures, only what mtlgen's glue uses, so that
// a misspelled selector, a wrong argument type or a missing nullability annotation fails the
// check exactly as it would against the macOS SDK. Never used to build anything that runs.
#pragma once

#include <stddef.h>
#include <stdint.h>

// <objc/objc.h>, <objc/NSObjCRuntime.h>, <Foundation/NSObjCRuntime.h>
typedef bool BOOL;  // arm64 macOS
#define YES __objc_yes
#define NO __objc_no
typedef long NSInteger;
typedef unsigned long NSUInteger;
#define nil nullptr  // <objc/objc.h> when the compiler has nullptr

#define NS_ASSUME_NONNULL_BEGIN _Pragma("clang assume_nonnull begin")
#define NS_ASSUME_NONNULL_END _Pragma("clang assume_nonnull end")
#define NS_DESIGNATED_INITIALIZER __attribute__((objc_designated_initializer))
#define NS_UNAVAILABLE __attribute__((unavailable))
#define NS_SWIFT_NAME(_name) __attribute__((swift_name(#_name)))
#define NS_ENUM(_type, _name) enum _name : _type _name; enum _name : _type
#define NS_ERROR_ENUM(_domain, _name)                                        \
  enum _name : NSInteger _name;                                              \
  enum __attribute__((ns_error_domain(_domain))) _name : NSInteger
#define NS_TYPED_EXTENSIBLE_ENUM __attribute__((swift_wrapper(struct)))
#define NS_RETURNS_INNER_POINTER __attribute__((objc_returns_inner_pointer))
// In C++, options are the integer type itself so that `A | B` and `0` need no cast (CFAvailability.h).
#define NS_OPTIONS(_type, _name) _type _name; enum : _type
#define FOUNDATION_EXPORT extern
#define API_AVAILABLE(...) __attribute__((availability(macos, introduced = 15.0)))
#define API_DEPRECATED(_message, ...) __attribute__((deprecated(_message)))

// <Availability.h>: this stub models the macOS 15 SDK.
#define __MAC_14_0 140000
#define __MAC_15_0 150000

typedef double NSTimeInterval;
typedef double CFTimeInterval;  // <CoreFoundation/CFDate.h>

typedef struct _NSZone NSZone;

NS_ASSUME_NONNULL_BEGIN

@class NSString;

@protocol NSObject
- (BOOL)isEqual:(nullable id)object;
- (BOOL)isKindOfClass:(Class)aClass;
@property (readonly) NSUInteger hash;
@property (readonly, copy) NSString* description;
@end

__attribute__((objc_root_class))
@interface NSObject <NSObject>
+ (instancetype)alloc;
+ (instancetype)new;
+ (Class)class;
- (instancetype)init;
@end

// <dispatch/dispatch.h>: in Objective-C, dispatch objects are Objective-C objects.
@protocol OS_dispatch_data <NSObject>
@end
@protocol OS_dispatch_queue <NSObject>
@end
typedef NSObject<OS_dispatch_data>* dispatch_data_t;
typedef NSObject<OS_dispatch_queue>* dispatch_queue_t;
typedef void* dispatch_block_t;  // a block type on macOS; only ever passed as NULL here
#define DISPATCH_DATA_DESTRUCTOR_DEFAULT NULL
extern dispatch_data_t dispatch_data_create(const void* buffer, size_t size, dispatch_queue_t _Nullable queue,
                                            dispatch_block_t _Nullable destructor);

@protocol NSCopying
- (id)copyWithZone:(nullable NSZone*)zone;
@end

typedef struct _NSRange {
  NSUInteger location;
  NSUInteger length;
} NSRange;

static inline NSRange NSMakeRange(NSUInteger loc, NSUInteger len) {
  NSRange r = {loc, len};
  return r;
}

typedef struct {
  unsigned long state;
  id __unsafe_unretained _Nullable* _Nullable itemsPtr;
  unsigned long* _Nullable mutationsPtr;
  unsigned long extra[5];
} NSFastEnumerationState;

@protocol NSFastEnumeration
- (NSUInteger)countByEnumeratingWithState:(NSFastEnumerationState*)state
                                  objects:(id __unsafe_unretained _Nullable[_Nonnull])buffer
                                    count:(NSUInteger)len;
@end

@class NSURL;
@class NSError;

typedef NSUInteger NSStringEncoding;
enum { NSUTF8StringEncoding = 4 };

@interface NSString : NSObject <NSCopying>
+ (nullable instancetype)stringWithUTF8String:(const char*)nullTerminatedCString;
+ (nullable instancetype)stringWithContentsOfURL:(NSURL*)url
                                        encoding:(NSStringEncoding)enc
                                           error:(NSError**)error;
@property (nullable, readonly) const char* UTF8String;
@property (readonly) NSUInteger length;
- (BOOL)isEqualToString:(NSString*)aString;
- (BOOL)hasSuffix:(NSString*)str;
- (NSString*)stringByAppendingString:(NSString*)aString;
- (NSString*)stringByAppendingPathComponent:(NSString*)str;
@end

// <Foundation/NSValue.h>: the factory methods boxed expressions (@(x)) call, and the accessors.
@interface NSNumber : NSObject <NSCopying>
+ (NSNumber*)numberWithBool:(BOOL)value;
+ (NSNumber*)numberWithInt:(int)value;
+ (NSNumber*)numberWithUnsignedInt:(unsigned int)value;
+ (NSNumber*)numberWithLong:(long)value;
+ (NSNumber*)numberWithUnsignedLong:(unsigned long)value;
+ (NSNumber*)numberWithLongLong:(long long)value;
+ (NSNumber*)numberWithUnsignedLongLong:(unsigned long long)value;
+ (NSNumber*)numberWithFloat:(float)value;
+ (NSNumber*)numberWithDouble:(double)value;
@property (readonly) BOOL boolValue;
@property (readonly) long long longLongValue;
@property (readonly) double doubleValue;
@end

@interface NSArray<__covariant ObjectType> : NSObject <NSCopying, NSFastEnumeration>
// Used by array literals.
+ (instancetype)arrayWithObjects:(const ObjectType _Nonnull[_Nonnull])objects count:(NSUInteger)cnt;
@property (readonly) NSUInteger count;
- (ObjectType)objectAtIndex:(NSUInteger)index;
- (ObjectType)objectAtIndexedSubscript:(NSUInteger)idx;
@end

@interface NSMutableArray<ObjectType> : NSArray<ObjectType>
+ (instancetype)array;
+ (instancetype)arrayWithCapacity:(NSUInteger)numItems;
- (void)addObject:(ObjectType)anObject;
@end

@interface NSDictionary<__covariant KeyType, __covariant ObjectType> : NSObject <NSCopying, NSFastEnumeration>
// Used by dictionary literals.
+ (instancetype)dictionaryWithObjects:(const ObjectType _Nonnull[_Nullable])objects
                              forKeys:(const KeyType<NSCopying> _Nonnull[_Nullable])keys
                                count:(NSUInteger)cnt;
@property (readonly) NSUInteger count;
- (nullable ObjectType)objectForKey:(KeyType)aKey;
- (nullable ObjectType)objectForKeyedSubscript:(KeyType)key;
@end

@interface NSMutableDictionary<KeyType, ObjectType> : NSDictionary<KeyType, ObjectType>
+ (instancetype)dictionary;
- (void)setObject:(nullable ObjectType)obj forKeyedSubscript:(KeyType<NSCopying>)key;
@end

// <Foundation/NSData.h>
typedef NS_OPTIONS(NSUInteger, NSDataReadingOptions) {
  NSDataReadingMappedIfSafe = 1UL << 0,
};
typedef NS_OPTIONS(NSUInteger, NSDataWritingOptions) {
  NSDataWritingAtomic = 1UL << 0,
  NSDataWritingWithoutOverwriting = 1UL << 1,
};

@interface NSData : NSObject <NSCopying>
+ (nullable instancetype)dataWithContentsOfFile:(NSString*)path
                                        options:(NSDataReadingOptions)readOptionsMask
                                          error:(NSError**)errorPtr;
@property (readonly) NSUInteger length;
@property (readonly) const void* bytes NS_RETURNS_INNER_POINTER;
- (BOOL)writeToFile:(NSString*)path options:(NSDataWritingOptions)writeOptionsMask error:(NSError**)errorPtr;
@end

// <Foundation/NSJSONSerialization.h>
typedef NS_OPTIONS(NSUInteger, NSJSONReadingOptions) {
  NSJSONReadingMutableContainers = (1UL << 0),
  NSJSONReadingMutableLeaves = (1UL << 1),
};
typedef NS_OPTIONS(NSUInteger, NSJSONWritingOptions) {
  NSJSONWritingPrettyPrinted = (1UL << 0),
  NSJSONWritingSortedKeys = (1UL << 1),
};

@interface NSJSONSerialization : NSObject
+ (nullable id)JSONObjectWithData:(NSData*)data options:(NSJSONReadingOptions)opt error:(NSError**)error;
+ (nullable NSData*)dataWithJSONObject:(id)obj options:(NSJSONWritingOptions)opt error:(NSError**)error;
@end

// <Foundation/NSURL.h>
@interface NSURL : NSObject <NSCopying>
+ (NSURL*)fileURLWithPath:(NSString*)path;
@property (nullable, readonly, copy) NSString* path;
- (nullable NSURL*)URLByAppendingPathComponent:(NSString*)pathComponent;
@end

// <Foundation/NSFileManager.h>
@interface NSFileManager : NSObject
@property (class, readonly, strong) NSFileManager* defaultManager;
- (BOOL)fileExistsAtPath:(NSString*)path;
- (BOOL)removeItemAtPath:(NSString*)path error:(NSError**)error;
@end

// <Foundation/NSPathUtilities.h>
FOUNDATION_EXPORT NSString* NSTemporaryDirectory(void);

// <Foundation/NSBundle.h>
@interface NSBundle : NSObject
@property (class, readonly, strong) NSBundle* mainBundle;
- (nullable id)objectForInfoDictionaryKey:(NSString*)key;
@end

// <Foundation/NSProcessInfo.h>
@interface NSProcessInfo : NSObject
@property (class, readonly, strong) NSProcessInfo* processInfo;
@property (readonly, copy) NSDictionary<NSString*, NSString*>* environment;
@property (readonly) int processIdentifier;
@end

// <Foundation/NSError.h>
typedef NSString* NSErrorDomain;
typedef NSString* NSErrorUserInfoKey NS_TYPED_EXTENSIBLE_ENUM;

extern NSErrorUserInfoKey const NSUnderlyingErrorKey;
extern NSErrorUserInfoKey const NSLocalizedDescriptionKey;

@interface NSError : NSObject <NSCopying>
+ (instancetype)errorWithDomain:(NSErrorDomain)domain
                           code:(NSInteger)code
                       userInfo:(nullable NSDictionary<NSErrorUserInfoKey, id>*)dict;
@property (readonly, copy) NSErrorDomain domain;
@property (readonly) NSInteger code;
@property (readonly, copy) NSDictionary<NSErrorUserInfoKey, id>* userInfo;
@property (readonly, copy) NSString* localizedDescription;
@end

NS_ASSUME_NONNULL_END
