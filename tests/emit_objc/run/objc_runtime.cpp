// A minimal Objective-C runtime for clang's `-fobjc-runtime=gnustep-2.0` ABI, test-only: just enough
// to run the generated glue on Linux against the stub classes of stub_classes.mm. Debian packages no
// runtime clang can target with ARC (GCC's libobjc has only the fragile ABI, which rejects ivars
// declared in @implementation; GNUstep's libobjc2 and ObjFW are not packaged), so this one is ours.
// Scope: classes and metaclasses from the __objc_classes section (non-fragile ivar layout, C++
// ivars constructed), message sends by selector name (objc_msgSend, super sends), tagged small
// strings, ARC entry points that never free (a test process leaks by design), atomic property
// accessors, and C++ exceptions through Objective-C++ frames. No categories, protocols at run time,
// forwarding, +initialize or weak references beyond plain stores.
#include <Block.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <unwind.h>

namespace {

struct Selector {
  const char* name;
  const char* types;
};

struct Method {
  void* imp;
  const Selector* selector;
  const char* types;
};

struct MethodList {
  MethodList* next;
  int32_t count;
  int64_t entry_size;
  // `count` entries of `entry_size` bytes follow
};

struct Ivar {
  const char* name;
  const char* type;
  int32_t* offset;  // the global the compiled code reads
  int32_t size;
  int32_t flags;  // bits 3..8: log2 of the alignment
};

struct IvarList {
  int32_t count;
  int64_t entry_size;
};

// The gnustep-2.0 class structure (libobjc2's `struct objc_class`, new ABI).
struct Class_ {
  Class_* isa;
  Class_* super_class;
  const char* name;
  long version;
  unsigned long info;
  long instance_size;
  IvarList* ivars;
  MethodList* methods;
  void* dtable;
  Class_* subclass_list;
  void* cxx_construct;
  void* cxx_destruct;
  Class_* sibling_class;
  void* protocols;
  void* extra_data;
  long abi_version;
  void* properties;
};

// The pointers __objc_load receives: the start and end of each section clang fills.
struct LoadSections {
  uint64_t version;
  Selector* selectors_begin;
  Selector* selectors_end;
  Class_** classes_begin;
  Class_** classes_end;
  void* rest[12];
};

using MethodTable = std::unordered_map<std::string_view, void*>;

struct Runtime {
  std::unordered_map<const Class_*, MethodTable> methods;  // immutable once the program runs main
  std::unordered_map<std::string_view, Class_*> classes;
  std::vector<Class_*> laid_out;
  Class_* tagged_string_class = nullptr;
};

Runtime& runtime() {
  static Runtime r;
  return r;
}

[[noreturn]] void fail(const char* what, const char* a, const char* b) {
  std::fprintf(stderr, "objc_runtime: %s %s %s\n", what, a, b);
  std::abort();
}

void add_methods(const Class_* cls) {
  MethodTable& table = runtime().methods[cls];
  for (const MethodList* list = cls->methods; list != nullptr; list = list->next) {
    const auto* bytes = reinterpret_cast<const char*>(list + 1);
    for (int32_t i = 0; i < list->count; ++i) {
      const auto* m = reinterpret_cast<const Method*>(bytes + i * list->entry_size);
      table.emplace(m->selector->name, m->imp);
    }
  }
}

bool is_laid_out(const Class_* cls) {
  for (const Class_* c : runtime().laid_out) {
    if (c == cls) return true;
  }
  return false;
}

// Gives each ivar its offset after the superclass's (or the isa pointer), as the non-fragile ABI
// leaves to the runtime, and links the metaclass chain.
void lay_out(Class_* cls) {
  if (is_laid_out(cls)) return;
  if (cls->super_class != nullptr) lay_out(cls->super_class);
  Class_* meta = cls->isa;
  Class_* root = cls;
  while (root->super_class != nullptr) root = root->super_class;
  meta->isa = root->isa;
  meta->super_class = cls->super_class != nullptr ? cls->super_class->isa : cls;
  int64_t offset = cls->super_class != nullptr ? cls->super_class->instance_size : int64_t{sizeof(void*)};
  if (cls->ivars != nullptr) {
    const auto* bytes = reinterpret_cast<const char*>(cls->ivars + 1);
    for (int32_t i = 0; i < cls->ivars->count; ++i) {
      const auto* ivar = reinterpret_cast<const Ivar*>(bytes + i * cls->ivars->entry_size);
      if (std::strcmp(ivar->name, "isa") == 0) {
        *ivar->offset = 0;
        continue;
      }
      const int64_t align = int64_t{1} << ((ivar->flags >> 3) & 63);
      offset = (offset + align - 1) / align * align;
      *ivar->offset = static_cast<int32_t>(offset);
      offset += ivar->size;
    }
  }
  cls->instance_size = (offset + 7) / 8 * 8;  // subclasses continue here (constant strings rely on it)
  add_methods(cls);
  add_methods(meta);
  runtime().laid_out.push_back(cls);
}

// The class that answers messages to `object`: small strings are tagged pointers (tag 4).
const Class_* class_of(const void* object) {
  const auto bits = reinterpret_cast<uintptr_t>(object);
  if ((bits & 7) == 0) return *static_cast<Class_* const*>(object);
  if ((bits & 7) == 4 && runtime().tagged_string_class != nullptr) return runtime().tagged_string_class;
  fail("unsupported tagged pointer", "", "");
}

void* find_method(const Class_* cls, const Selector* selector) {
  for (const Class_* c = cls; c != nullptr; c = c->super_class) {
    auto table = runtime().methods.find(c);
    if (table == runtime().methods.end()) continue;
    auto it = table->second.find(selector->name);
    if (it != table->second.end()) return it->second;
  }
  fail("no method", cls->name, selector->name);
}

void* return_nil() { return nullptr; }

// Atomic synthesized properties: one lock is enough for a test.
std::mutex& property_lock() {
  static std::mutex m;
  return m;
}

}  // namespace

extern "C" {

void __objc_load(LoadSections* sections) {
  static std::mutex once;
  std::lock_guard<std::mutex> lock(once);
  for (Class_** c = sections->classes_begin; c != sections->classes_end; ++c) {
    if (*c != nullptr) runtime().classes.emplace((*c)->name, *c);
  }
  for (auto& [name, cls] : runtime().classes) lay_out(cls);
  auto tagged = runtime().classes.find("MTGTaggedString");
  if (tagged != runtime().classes.end()) runtime().tagged_string_class = tagged->second;
}

// Called by objc_msgSend (below) with the receiver and selector; never with nil.
void* mtg_objc_lookup(const void* receiver, const Selector* selector) {
  return find_method(class_of(receiver), selector);
}

struct ObjcSuper {
  void* receiver;
  const Class_* cls;
};

void* objc_msg_lookup_super(const ObjcSuper* super, const Selector* selector) {
  if (super->receiver == nullptr) return reinterpret_cast<void*>(&return_nil);
  return find_method(super->cls, selector);
}

// For the stub classes (stub_classes.mm): allocation with C++ ivars constructed, root first.
void* mtg_objc_alloc(const void* cls_pointer) {
  const auto* cls = static_cast<const Class_*>(cls_pointer);
  void* object = std::calloc(1, static_cast<size_t>(cls->instance_size));
  *static_cast<const Class_**>(object) = cls;
  std::vector<const Class_*> chain;
  for (const Class_* c = cls; c != nullptr; c = c->super_class) chain.insert(chain.begin(), c);
  static const Selector construct{".cxx_construct", nullptr};
  for (const Class_* c : chain) {
    void* imp = c->cxx_construct;
    if (imp == nullptr) {
      auto table = runtime().methods.find(c);
      auto it = table->second.find(".cxx_construct");
      if (it != table->second.end()) imp = it->second;
    }
    if (imp != nullptr) reinterpret_cast<void* (*)(void*, const Selector*)>(imp)(object, &construct);
  }
  return object;
}

const void* mtg_objc_class_of(const void* object) { return class_of(object); }
const void* mtg_objc_superclass(const void* cls) { return static_cast<const Class_*>(cls)->super_class; }
const char* mtg_objc_class_name(const void* cls) { return static_cast<const Class_*>(cls)->name; }
bool mtg_objc_responds(const void* object, const char* name) {
  for (const Class_* c = class_of(object); c != nullptr; c = c->super_class) {
    auto table = runtime().methods.find(c);
    if (table != runtime().methods.end() && table->second.count(name) != 0) return true;
  }
  return false;
}

// ARC: objects are never freed, so retain and release only keep the calling convention.
void* objc_retain(void* object) { return object; }
void objc_release(void*) {}
void* objc_autorelease(void* object) { return object; }
void* objc_autoreleaseReturnValue(void* object) { return object; }
void* objc_retainAutoreleasedReturnValue(void* object) { return object; }
void* objc_retainAutoreleaseReturnValue(void* object) { return object; }
void* objc_retainAutorelease(void* object) { return object; }
void* objc_unsafeClaimAutoreleasedReturnValue(void* object) { return object; }
void objc_storeStrong(void** location, void* object) { *location = object; }
void* objc_autoreleasePoolPush() { return nullptr; }
void objc_autoreleasePoolPop(void*) {}
void* objc_retainBlock(void* block) { return block != nullptr ? _Block_copy(block) : nullptr; }
void* objc_initWeak(void** location, void* object) { return *location = object; }
void* objc_storeWeak(void** location, void* object) { return *location = object; }
void* objc_loadWeakRetained(void** location) { return *location; }
void* objc_loadWeak(void** location) { return *location; }
void objc_destroyWeak(void**) {}
void objc_copyWeak(void** to, void** from) { *to = *from; }
void objc_moveWeak(void** to, void** from) { *to = *from; }

void* objc_getProperty(void* self, const Selector*, ptrdiff_t offset, bool) {
  std::lock_guard<std::mutex> lock(property_lock());
  return *reinterpret_cast<void**>(static_cast<char*>(self) + offset);
}
void objc_setProperty_atomic(void* self, const Selector*, void* value, ptrdiff_t offset) {
  std::lock_guard<std::mutex> lock(property_lock());
  *reinterpret_cast<void**>(static_cast<char*>(self) + offset) = value;
}
void objc_setProperty_nonatomic(void* self, const Selector*, void* value, ptrdiff_t offset) {
  *reinterpret_cast<void**>(static_cast<char*>(self) + offset) = value;
}
void objc_setProperty_atomic_copy(void* self, const Selector*, void* value, ptrdiff_t offset) {
  objc_setProperty_atomic(self, nullptr, value, offset);  // strings here are immutable: a copy is the same
}
void objc_setProperty_nonatomic_copy(void* self, const Selector*, void* value, ptrdiff_t offset) {
  objc_setProperty_nonatomic(self, nullptr, value, offset);
}
void objc_getPropertyStruct(void* dest, const void* src, ptrdiff_t size, bool, bool) {
  std::lock_guard<std::mutex> lock(property_lock());
  std::memcpy(dest, src, static_cast<size_t>(size));
}
void objc_setPropertyStruct(void* dest, const void* src, ptrdiff_t size, bool, bool) {
  std::lock_guard<std::mutex> lock(property_lock());
  std::memcpy(dest, src, static_cast<size_t>(size));
}

void objc_enumerationMutation(void*) { fail("collection mutated during enumeration", "", ""); }

// Objective-C++ frames unwind C++ exceptions only (the glue throws and catches std:: exceptions).
_Unwind_Reason_Code __gxx_personality_v0(int, _Unwind_Action, uint64_t, _Unwind_Exception*, _Unwind_Context*);
_Unwind_Reason_Code __gnustep_objcxx_personality_v0(int version, _Unwind_Action actions, uint64_t exception_class,
                                                    _Unwind_Exception* exception, _Unwind_Context* context) {
  return __gxx_personality_v0(version, actions, exception_class, exception, context);
}

}  // extern "C"

// objc_msgSend: saves the argument registers, finds the method, restores them and jumps to it, so
// the method sees the caller's arguments (x86-64 System V). A nil receiver returns zero.
// objc_msgSend_stret: the same with the struct-return pointer first (receiver in rsi).
asm(R"(
  .text
  .globl objc_msgSend
  .type objc_msgSend, @function
objc_msgSend:
  test %rdi, %rdi
  jz 1f
  push %rbp
  mov %rsp, %rbp
  sub $192, %rsp
  mov %rdi, 0(%rsp)
  mov %rsi, 8(%rsp)
  mov %rdx, 16(%rsp)
  mov %rcx, 24(%rsp)
  mov %r8, 32(%rsp)
  mov %r9, 40(%rsp)
  mov %rax, 48(%rsp)
  movdqu %xmm0, 64(%rsp)
  movdqu %xmm1, 80(%rsp)
  movdqu %xmm2, 96(%rsp)
  movdqu %xmm3, 112(%rsp)
  movdqu %xmm4, 128(%rsp)
  movdqu %xmm5, 144(%rsp)
  movdqu %xmm6, 160(%rsp)
  movdqu %xmm7, 176(%rsp)
  call mtg_objc_lookup
  mov %rax, %r11
  mov 0(%rsp), %rdi
  mov 8(%rsp), %rsi
  mov 16(%rsp), %rdx
  mov 24(%rsp), %rcx
  mov 32(%rsp), %r8
  mov 40(%rsp), %r9
  mov 48(%rsp), %rax
  movdqu 64(%rsp), %xmm0
  movdqu 80(%rsp), %xmm1
  movdqu 96(%rsp), %xmm2
  movdqu 112(%rsp), %xmm3
  movdqu 128(%rsp), %xmm4
  movdqu 144(%rsp), %xmm5
  movdqu 160(%rsp), %xmm6
  movdqu 176(%rsp), %xmm7
  leave
  jmp *%r11
1:
  xor %eax, %eax
  xor %edx, %edx
  pxor %xmm0, %xmm0
  pxor %xmm1, %xmm1
  ret
  .size objc_msgSend, .-objc_msgSend

  .globl objc_msgSend_stret
  .type objc_msgSend_stret, @function
objc_msgSend_stret:
  test %rsi, %rsi
  jz 2f
  push %rbp
  mov %rsp, %rbp
  sub $192, %rsp
  mov %rdi, 0(%rsp)
  mov %rsi, 8(%rsp)
  mov %rdx, 16(%rsp)
  mov %rcx, 24(%rsp)
  mov %r8, 32(%rsp)
  mov %r9, 40(%rsp)
  mov %rax, 48(%rsp)
  movdqu %xmm0, 64(%rsp)
  movdqu %xmm1, 80(%rsp)
  movdqu %xmm2, 96(%rsp)
  movdqu %xmm3, 112(%rsp)
  movdqu %xmm4, 128(%rsp)
  movdqu %xmm5, 144(%rsp)
  movdqu %xmm6, 160(%rsp)
  movdqu %xmm7, 176(%rsp)
  mov %rsi, %rdi
  mov %rdx, %rsi
  call mtg_objc_lookup
  mov %rax, %r11
  mov 0(%rsp), %rdi
  mov 8(%rsp), %rsi
  mov 16(%rsp), %rdx
  mov 24(%rsp), %rcx
  mov 32(%rsp), %r8
  mov 40(%rsp), %r9
  mov 48(%rsp), %rax
  movdqu 64(%rsp), %xmm0
  movdqu 80(%rsp), %xmm1
  movdqu 96(%rsp), %xmm2
  movdqu 112(%rsp), %xmm3
  movdqu 128(%rsp), %xmm4
  movdqu 144(%rsp), %xmm5
  movdqu 160(%rsp), %xmm6
  movdqu 176(%rsp), %xmm7
  leave
  jmp *%r11
2:
  mov %rdi, %rax
  ret
  .size objc_msgSend_stret, .-objc_msgSend_stret
  .section .note.GNU-stack,"",@progbits
  .text
)");
