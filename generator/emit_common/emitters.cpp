// The emitter registry: adding a backend is one file plus one line here.
#include "emit_common/emitter.h"
#include "emit_msl/msl_emitter.h"

namespace mtlgen::emit {

const std::vector<Emitter>& all_emitters() {
  static const std::vector<Emitter> emitters = {
      {"msl", "Metal kernel source, one entry point per variant", emit_msl, nullptr},
  };
  return emitters;
}

}  // namespace mtlgen::emit
