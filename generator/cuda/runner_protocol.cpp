// The runner's side of a case (shim/mtlcu/runner.cu reads it): case.txt names the reference, the
// dims, scalars and constants, the buffers with their roles and the dispatches; in_<i>.bin and
// arg_<i>.bin hold the inputs and argument blobs; result.txt and gpu_<i>.bin / ref_<i>.bin come back.
#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "cuda/gpu_run.h"
#include "verify/dispatch_setup.h"
#include "verify/elements.h"
#include "verify/inputs.h"

namespace mtlgen::cuda {

using verify::ScalarValue;

namespace {

void write_bytes(const fs::path& p, const void* data, size_t bytes) {
  std::ofstream out(p, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
}

double scalar_of(const ir::Kernel& k, const ir::TestCase& t, const std::string& name) {
  if (t.scalars.count(name)) return t.scalars.at(name);
  for (const auto& s : k.scalars)
    if (s.name == name) return s.default_value;
  return 0;
}

// A hand-written kernel's argument blobs (Metal layout from the front end), as the simulator path
// fills them: integer expressions of dims and tunables, or spec scalars.
std::vector<std::vector<uint8_t>> argument_blobs(const GpuCase& c, const expr::Env& env) {
  std::vector<std::vector<uint8_t>> blobs;
  for (const auto& blob : c.variant->arguments) {
    std::vector<uint8_t> bytes(std::max<uint64_t>(blob.bytes, 16), 0);
    for (const auto& slot : blob.slots) {
      uint8_t* at = bytes.data() + slot.offset;
      if (slot.kind == ir::ArgumentSlot::Kind::floating) {
        double v = slot.scalar.empty() ? double(expr::evaluate(*slot.integer, env)) : scalar_of(*c.kernel, *c.test, slot.scalar);
        verify::store_element(slot.size == 2 ? ir::ScalarType::f16 : ir::ScalarType::f32, at, 0, v);
        continue;
      }
      int64_t v = slot.scalar.empty() ? expr::evaluate(*slot.integer, env) : int64_t(scalar_of(*c.kernel, *c.test, slot.scalar));
      if (slot.kind == ir::ArgumentSlot::Kind::boolean) v = v != 0;
      std::memcpy(at, &v, static_cast<size_t>(slot.size));  // little-endian: the low bytes
    }
    blobs.push_back(std::move(bytes));
  }
  return blobs;
}

const char* role_of(const ir::Buffer& b) {
  if (b.intermediate) return "scratch";
  return b.access == ir::Access::read ? "in" : b.access == ir::Access::write ? "out" : "inout";
}

std::string list_line(const char* key, const auto& values) {
  return fmt::format("{} {} {}\n", key, values.size(), fmt::join(values, " "));
}

// `dims`, `scalars` and `constants` lines of a call of `k` (a kernel or a reference).
std::string values_text(const ir::Kernel& k, const std::map<std::string, int64_t>& dims, const ScalarValue& scalar,
                        const ir::ConstantSetting& constants) {
  std::vector<std::string> scalars, values;
  for (double s : verify::scalar_values(k, scalar)) scalars.push_back(fmt::format("{:.17g}", s));
  for (double v : constants.empty() ? k.default_constants() : constants) values.push_back(fmt::format("{:.17g}", v));
  return list_line("dims", verify::dims_values(k, dims)) + list_line("scalars", scalars) + list_line("constants", values);
}

std::string dispatch_text(const ir::Kernel& k, const ir::Variant& v, size_t module, const std::string& values,
                          const std::vector<size_t>& slots) {
  return fmt::format("{} {} {}\n{}{}", module, &v - k.variants.data(), v.entry_point, values, list_line("slots", slots));
}

// A family's dispatches as its glue makes them (the simulator's family runner resolves them the
// same way): each kernel's dims, serving variant, scalars and buffers bound to the family's.
// Throws std::runtime_error where the case's dims make a dispatch invalid.
std::string family_dispatches(const GpuCase& c, const std::vector<verify::HostBuffer>& buffers) {
  const ir::Family& f = *c.kernel->family;
  std::string text = fmt::format("dispatches {}\n", f.dispatches.size());
  for (size_t i = 0; i < f.dispatches.size(); ++i) {
    const ir::FamilyDispatch& d = f.dispatches[i];
    const ir::Kernel& member = f.kernel_of(d);
    const auto dims = f.member_dims(d, c.test->dims, *c.variant);
    const ir::Variant& v = f.member_variant(d, dims, *c.variant);
    std::string problem = member.dims_violation(dims);
    if (problem.empty()) problem = member.variant_violation(dims, v);
    if (!problem.empty())
      throw std::runtime_error(fmt::format("dispatch {} (`{}`) gets dims it does not accept: {}", i + 1, member.name, problem));
    const expr::Env env = ir::Kernel::env_for(dims, v);
    std::vector<size_t> slots;
    for (const auto& mb : member.buffers) {
      const std::string& name = ir::Family::bound(d.buffers, mb.name);
      auto at = std::find_if(buffers.begin(), buffers.end(), [&](const verify::HostBuffer& b) { return b.decl->name == name; });
      if (at == buffers.end() || size_t(mb.elements(env)) > at->elements)
        throw std::runtime_error(fmt::format("dispatch {} (`{}`): the family's `{}` is too small for its `{}`", i + 1,
                                             member.name, name, mb.name));
      slots.push_back(size_t(at - buffers.begin()));
    }
    auto scalar = [&](const std::string& s) { return scalar_of(*c.kernel, *c.test, ir::Family::bound(d.scalars, s)); };
    text += dispatch_text(member, v, d.member, values_text(member, dims, scalar, {}), slots);
  }
  return text;
}

}  // namespace

std::vector<verify::HostBuffer> prepare_case(const GpuCase& c, const fs::path& dir, const std::string& mode) {
  const ir::Kernel& k = *c.kernel;
  fs::create_directories(dir);
  expr::Env env = ir::Kernel::env_for(c.test->dims, *c.variant);
  auto scalar = [&](const std::string& n) { return scalar_of(k, *c.test, n); };
  const std::string values = values_text(k, c.test->dims, scalar, c.constants);
  std::vector<verify::HostBuffer> buffers = verify::host_buffers(k, *c.variant, *c.test, env);
  std::string text = fmt::format("reference {}\n{}buffers {}\n", verify::reference_symbol(k, *c.variant), values, k.buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    const verify::HostBuffer& b = buffers[i];
    text += fmt::format("{} {} {} {}\n", b.decl->name, ir::info(b.type).size, b.elements, role_of(*b.decl));
    if (!b.starts_unwritten()) write_bytes(dir / fmt::format("in_{}.bin", i), b.initial.data(), b.initial.size());
  }
  auto blobs = argument_blobs(c, env);
  std::vector<size_t> sizes;
  for (size_t i = 0; i < blobs.size(); ++i) {
    write_bytes(dir / fmt::format("arg_{}.bin", i), blobs[i].data(), blobs[i].size());
    sizes.push_back(blobs[i].size());
  }
  text += list_line("arguments", sizes);
  if (k.is_family()) {
    text += family_dispatches(c, buffers);
  } else {
    std::vector<size_t> slots(k.buffers.size());
    for (size_t i = 0; i < slots.size(); ++i) slots[i] = i;
    text += "dispatches 1\n" + dispatch_text(k, *c.variant, 0, values, slots);
  }
  text += "mode " + mode + "\n";
  write_bytes(dir / "case.txt", text.data(), text.size());
  return buffers;
}

std::map<std::string, std::string> read_result(const fs::path& dir) {
  std::map<std::string, std::string> r;
  std::istringstream in(read_text(dir / "result.txt"));
  for (std::string line; std::getline(in, line);) {
    size_t space = line.find(' ');
    r[line.substr(0, space)] = space == std::string::npos ? "" : line.substr(space + 1);
  }
  return r;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace mtlgen::cuda
