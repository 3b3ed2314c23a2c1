#include "emit_common/cpp_text.h"

#include <fmt/format.h>

#include <cmath>

#include "emit_common/emitter.h"

namespace mtlgen::emit {

std::string c_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '?': out += out.back() == '?' ? "\\?" : "?"; break;  // `??x` is a trigraph in C++14 (MSL)
      default:
        // Octal, not \x: a hex escape would swallow the hex digits that follow it.
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          out += fmt::format("\\{:03o}", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string comment_text(const std::string& text) {
  std::string out;
  for (char c : text) {
    bool control = static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
    char prev = out.empty() ? ' ' : out.back();
    if ((prev == '*' && c == '/') || (prev == '/' && c == '*') || (prev == '?' && c == '?')) out += ' ';
    out += control ? ' ' : c;
  }
  while (!out.empty() && (out.back() == '\\' || out.back() == ' ')) out.pop_back();
  return out;
}

std::string cpp_literal(ir::ScalarType type, double value) {
  if (type == ir::ScalarType::u32) return fmt::format("{}u", static_cast<uint64_t>(value));
  if (!ir::info(type).is_float) return fmt::format("{}", static_cast<int64_t>(value));
  if (std::isnan(value)) return "std::numeric_limits<float>::quiet_NaN()";
  if (std::isinf(value)) return value > 0 ? "std::numeric_limits<float>::infinity()" : "-std::numeric_limits<float>::infinity()";
  std::string text = fmt::format("{}", static_cast<float>(value));
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text + "f";
}

std::string cpp_initializer(ir::ScalarType type, double value) {
  if (type == ir::ScalarType::boolean) return value != 0 ? "true" : "false";
  std::string literal = cpp_literal(type, value);
  bool is_16_bit_float = type == ir::ScalarType::f16 || type == ir::ScalarType::bf16;
  return is_16_bit_float ? fmt::format("{}({})", ir::info(type).cpp, literal) : literal;
}

std::string host_expr(const expr::Expr& e) { return expr::render(e, host_spelling("mtlgen::dtype_size(types.{})")); }

std::vector<std::string> host_locals(const ir::Kernel& k, const std::vector<const expr::Expr*>& exprs) {
  std::set<std::string> used;
  for (const auto* e : exprs) e->collect_symbols(used);
  std::vector<std::string> lines;
  for (const auto& d : k.dims) {
    if (used.count(d.name)) lines.push_back(fmt::format("const int64_t {0} = dims.{0};", d.name));
  }
  for (const auto& t : k.tunables) {
    if (used.count(t.name)) lines.push_back(fmt::format("const int64_t {0} = tuning.{0};", t.name));
  }
  return lines;
}

std::string variant_condition(const ir::Kernel& k, const ir::Variant& v) {
  std::vector<std::string> parts;
  for (const auto& t : k.type_params) {
    parts.push_back(fmt::format("types.{} == mtlgen::DType::{}", t.name, ir::info(v.types.at(t.name)).suffix));
  }
  for (const auto& t : k.tunables) parts.push_back(fmt::format("tuning.{} == {}", t.name, v.tunables.at(t.name)));
  return parts.empty() ? "true" : fmt::format("{}", fmt::join(parts, " && "));
}

std::string host_type(const ir::TypeRef& t) { return t.concrete ? ir::info(*t.concrete).cpp : t.param; }

}  // namespace mtlgen::emit
