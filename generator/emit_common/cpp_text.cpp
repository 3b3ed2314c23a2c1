#include "emit_common/cpp_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
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

namespace {

bool identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Index just past the bracket that closes the one opened before `from` (`open` ... `close`), skipping
// string and character literals and comments; npos when it never closes.
size_t past_closing(const std::string& text, size_t from, char open, char close) {
  int depth = 0;
  for (size_t i = from; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"' || c == '\'') {
      for (++i; i < text.size() && text[i] != c; ++i) i += text[i] == '\\';
    } else if (text.compare(i, 2, "//") == 0) {
      i = text.find('\n', i);
      if (i == std::string::npos) return i;
    } else if (c == open) {
      ++depth;
    } else if (c == close && depth-- == 0) {
      return i + 1;
    }
  }
  return std::string::npos;
}

// Where the declaration starting at `from` ends: the `,` or `)` after a parameter, the `;` after a
// variable; npos when neither comes.
size_t declaration_end(const std::string& text, size_t from) {
  int depth = 0;
  for (size_t i = from; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '(' || c == '<' || c == '{' || c == '[') {
      ++depth;
    } else if ((c == '>' && text[i - 1] != '-') || c == '}' || c == ']') {
      depth = std::max(0, depth - 1);
    } else if (c == ')') {
      if (depth-- == 0) return i;
    } else if ((c == ',' || c == ';') && depth == 0) {
      return i;
    }
  }
  return std::string::npos;
}

// Whether `name` is used in `body` as an identifier of its own: not a member (`params.n`), nor
// inside a string literal or a comment.
bool uses_identifier(const std::string& body, const std::string& name) {
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (c == '"' || c == '\'') {
      for (++i; i < body.size() && body[i] != c; ++i) i += body[i] == '\\';
    } else if (body.compare(i, 2, "//") == 0) {
      i = std::min(body.find('\n', i), body.size());
    } else if (body.compare(i, name.size(), name) == 0 && (i == 0 || !identifier_char(body[i - 1])) &&
               (i + name.size() == body.size() || !identifier_char(body[i + name.size()]))) {
      const bool member = i > 0 && (body[i - 1] == '.' || (i > 1 && body.compare(i - 2, 2, "->") == 0) ||
                                    (i > 1 && body.compare(i - 2, 2, "::") == 0));
      if (!member) return true;
    }
  }
  return false;
}

// The name a parameter declaration `decl` (`const Dims& dims = {}`) gives: its last identifier
// before a default argument.
std::string parameter_name(std::string decl) {
  decl = decl.substr(0, decl.find('='));
  size_t end = decl.size();
  while (end > 0 && !identifier_char(decl[end - 1])) --end;
  size_t begin = end;
  while (begin > 0 && identifier_char(decl[begin - 1])) --begin;
  return decl.substr(begin, end - begin);
}

}  // namespace

std::string drop_needless_maybe_unused(const std::string& cpp) {
  static const std::string attribute = "[[maybe_unused]] ";
  std::string out;
  size_t copied = 0;
  for (size_t at = cpp.find(attribute); at != std::string::npos; at = cpp.find(attribute, at + 1)) {
    const size_t decl = at + attribute.size();
    const size_t decl_end = declaration_end(cpp, decl);
    if (decl_end == std::string::npos || cpp[decl_end] == ';') continue;  // a variable, not a parameter
    const size_t list_end = past_closing(cpp, decl, '(', ')');
    const size_t body = list_end == std::string::npos ? list_end : cpp.find_first_of("{;", list_end);
    if (body == std::string::npos || cpp[body] == ';') continue;  // a declaration: no body to look in
    const size_t body_end = past_closing(cpp, body + 1, '{', '}');
    const std::string name = parameter_name(cpp.substr(decl, decl_end - decl));
    if (!uses_identifier(cpp.substr(body, body_end - body), name)) continue;
    out += cpp.substr(copied, at - copied);
    copied = decl;
  }
  return out + cpp.substr(copied);
}

}  // namespace mtlgen::emit
