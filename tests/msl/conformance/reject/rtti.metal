// expect: 14:9 `dynamic_cast` is not supported | "Restrictions"
// expect: 15:9 run-time type identification (`typeid`) is not supported | "Restrictions"
#include <metal_stdlib>
using namespace metal;

struct Base {
  float bias;
};
struct Holder {
  thread Base* base;
};

void probe(thread Holder& h, thread Base& b) {
  (void)dynamic_cast<thread Base*>(h.base);
  (void)typeid(b);
}
