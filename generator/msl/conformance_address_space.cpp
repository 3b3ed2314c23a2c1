// Metal conformance checks, address spaces: every pointer and reference type Metal sees must
// say which memory it points into.
#include "msl/conformance_internal.h"

namespace mtlgen::msl {

namespace conformance {

namespace {

// One level of a declarator: the words before a `*` or `&`, inside one template argument list or
// one pair of parentheses.
struct Level {
  bool has_address_space = false;
  bool deduced = false;   // auto, decltype(...) or a template type parameter: the space comes
                          // with the deduced type, so nothing needs spelling here
  char open = 0;          // '<' or '(' that opened it; 0 for the declaration itself
  bool expression = false;  // template arguments or a parenthesised expression in them
  bool code = false;      // the group of a function pointer, `(*op)(T)`: code has no address space
  bool space_pointer = false;  // right after the `*` of a pointer into a named space (and cv words)
};

bool is_indirection(const std::string& t) { return t == "*" || t == "&" || t == "&&"; }

// Whether `t` can start an operand. A declarator's `*` or `&` is followed by `const`, an address
// space, `>`, `,`, `)` or (in a declaration) its name; an operator's by an operand.
bool starts_operand(const Token& t, bool names_are_operands) {
  if (t.kind == CXToken_Literal) return true;
  if (t.kind == CXToken_Identifier) return names_are_operands && !is_address_space(t.text);
  if (t.kind == CXToken_Keyword)
    return t.text == "sizeof" || t.text == "alignof" || t.text == "true" || t.text == "false";
  return t.text == "(" || t.text == "!" || t.text == "~" || t.text == "-" || t.text == "+";
}

// `N * 2`, `A && B`, `(x & 1)`: operators in array bounds and template arguments, not pointers.
// Names follow operators only where no declarator name can: in template arguments (type-ids
// are abstract) and parenthesised expressions.
bool is_operator(const std::vector<Token>& tokens, size_t i, const Level& top) {
  if (i + 1 >= tokens.size()) return false;
  const Token& next = tokens[i + 1];
  if (next.text == "(" && i + 2 < tokens.size() && is_indirection(tokens[i + 2].text)) return false;
  return starts_operand(next, top.expression);
}

size_t closing(const std::vector<Token>& tokens, size_t open, const char* left, const char* right) {
  int depth = 0;
  for (size_t i = open; i < tokens.size(); ++i) {
    if (tokens[i].text == left) ++depth;
    if (tokens[i].text == right && --depth == 0) return i;
  }
  return tokens.size();
}

// The level a `(` at tokens[i] opens: a declarator group `(*p)` keeps the outer type's words
// (and is code when a parameter list follows it: a function pointer); after `<`, `,`, `(` or an
// operator inside template arguments it is an expression; else a parameter list.
Level open_paren(const std::vector<Token>& tokens, size_t i, const Level& top) {
  Level level;
  level.open = '(';
  if (i + 1 < tokens.size() && is_indirection(tokens[i + 1].text)) {
    level = top;
    level.open = '(';
    const size_t close = closing(tokens, i, "(", ")");
    level.code = close + 1 < tokens.size() && tokens[close + 1].text == "(";
    return level;
  }
  const std::string& before = i > 0 ? tokens[i - 1].text : "";
  level.expression = top.expression && (before == "<" || before == "," || before == "(" ||
                                        (i > 0 && tokens[i - 1].kind == CXToken_Punctuation && before != ">" &&
                                         before != ")" && before != "]"));
  return level;
}

void report_missing(const Context& ctx, const Token& tok) {
  ctx.reporter.report(tok.loc,
                      std::string(tok.text == "*" ? "pointer" : "reference") +
                          " type without an explicit address space is not allowed in Metal",
                      kAddressSpaces,
                      "say where it points: `device`, `constant`, `threadgroup` or `thread`, "
                      "e.g. `device const float* p` or `thread float& x`");
}

}  // namespace

void check_address_spaces(const Context& ctx, const std::vector<Token>& tokens, const Scope& scope) {
  std::vector<Level> levels{Level{}};
  Level base;  // the declaration's own base type, for `device float *a, *b`
  bool base_set = false;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i].text;
    Level& top = levels.back();
    if (t != "const" && t != "volatile" && !is_indirection(t)) top.space_pointer = false;
    if (t == "[" || t == "{") {  // array bounds and struct bodies: expressions and fields,
      i = closing(tokens, i, t.c_str(), t == "[" ? "]" : "}");  // checked as their own cursors
    } else if (is_address_space(t)) {
      top.has_address_space = true;
    } else if (t == "auto" || t == "decltype" || scope.template_params.count(t)) {
      top.deduced = true;
    } else if (t == "<") {
      levels.push_back(Level{false, false, '<', true, false});
    } else if (t == "(") {
      levels.push_back(open_paren(tokens, i, top));
    } else if ((t == ">" && top.open == '<') || (t == ")" && top.open == '(')) {
      levels.pop_back();
    } else if (t == ">>") {
      for (int k = 0; k < 2 && levels.size() > 1 && levels.back().open == '<'; ++k) levels.pop_back();
    } else if (t == ",") {
      const bool expression = top.expression;
      const char open = top.open;
      top = (levels.size() == 1 && base_set) ? base : Level{};
      top.expression = expression;
      top.open = open;
    } else if (is_indirection(t) && !is_operator(tokens, i, top)) {
      // A reference to a pointer into a named space (`const device T*& x`) names the caller's
      // pointer variable: Apple's compiler builds MLX's (quantized.h adjust_matrix_offsets).
      const bool to_space_pointer = t != "*" && top.space_pointer;
      if (!top.has_address_space && !top.deduced && !top.code && !to_space_pointer) report_missing(ctx, tokens[i]);
      if (levels.size() == 1 && !base_set) {
        base = top;
        base_set = true;
      }
      top.space_pointer = t == "*" && top.has_address_space;
      top.has_address_space = false;  // the pointer itself is the next level
    }
  }
}

}  // namespace conformance

}  // namespace mtlgen::msl
