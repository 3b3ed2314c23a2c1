#include "emit_common/launch_args.h"

#include <fmt/format.h>

#include <stdexcept>

namespace mtlgen::emit {

std::vector<std::string> generated_launch_args(const ir::Kernel& k, const ir::Variant& v,
                                               const LaunchArgSpelling& spelling) {
  std::vector<std::string> args;
  for (const auto& p : k.params) {
    switch (p.kind) {
      case ir::KernelParam::Kind::buffer: {
        const auto& b = k.buffers[p.ref];
        const char* type = ir::info(b.type.resolve(v.types)).msl;
        args.push_back(fmt::format("static_cast<{}{}*>(slot[{}])", b.is_output() ? "" : "const ", type, p.ref));
        break;
      }
      case ir::KernelParam::Kind::params:
        args.push_back(fmt::format("*static_cast<{}{}*>(slot[{}])", spelling.params_qualifier, k.params_struct_name(),
                                   k.buffers.size()));
        break;
      case ir::KernelParam::Kind::threadgroup_array:
        args.push_back(spelling.threadgroup_array(ir::info(k.threadgroup_arrays[p.ref].type.resolve(v.types)).msl, p.ref));
        break;
      case ir::KernelParam::Kind::builtin:
        args.push_back(spelling.builtin(p.builtin, ir::builtin_msl_type(p.builtin, k.dispatch.rank())));
        break;
      // Only a hand-written kernel's Variant::source_params bind these; k.params never holds them.
      case ir::KernelParam::Kind::argument:
      case ir::KernelParam::Kind::unbound:
        throw std::logic_error("a generated kernel's binding table holds an argument or unbound parameter");
    }
  }
  return args;
}

}  // namespace mtlgen::emit
