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

typedef struct _NSZone NSZone;

NS_ASSUME_NONNULL_BEGIN

@class NSString;

@protocol NSObject
- (BOOL)isEqual:(nullable id)object;
@property (readonly) NSUInteger hash;
@property (readonly, copy) NSString* description;
@end

__attribute__((objc_root_class))
@interface NSObject <NSObject>
+ (instancetype)alloc;
+ (instancetype)new;
- (instancetype)init;
@end

@protocol NSCopying
- (id)copyWithZone:(nullable NSZone*)zone;
@end

@interface NSString : NSObject <NSCopying>
+ (nullable instancetype)stringWithUTF8String:(const char*)nullTerminatedCString;
@property (nullable, readonly) const char* UTF8String;
@property (readonly) NSUInteger length;
- (BOOL)isEqualToString:(NSString*)aString;
@end

@interface NSDictionary<__covariant KeyType, __covariant ObjectType> : NSObject <NSCopying>
// Used by dictionary literals.
+ (instancetype)dictionaryWithObjects:(const ObjectType _Nonnull[_Nullable])objects
                              forKeys:(const KeyType<NSCopying> _Nonnull[_Nullable])keys
                                count:(NSUInteger)cnt;
- (nullable ObjectType)objectForKey:(KeyType)aKey;
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
