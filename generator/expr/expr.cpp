#include "expr/expr.h"

#include <fmt/format.h>

#include <cctype>
#include <cstring>

#include "support/text.h"

namespace mtlgen::expr {

using support::Diagnostics;
using support::ErrorKind;
using support::SourceLoc;

void Expr::collect_symbols(std::set<std::string>& out) const {
  if (kind == Kind::symbol || kind == Kind::size_of) out.insert(name);
  for (const auto& o : operands) o.collect_symbols(out);
}

bool Expr::is_boolean() const {
  if (kind == Kind::logical_not) return true;
  if (kind != Kind::binary) return false;
  return op >= Op::eq;
}

namespace {

struct OpInfo {
  const char* text;
  int precedence;  // higher binds tighter
};

OpInfo info(Op op) {
  switch (op) {
    case Op::logical_or: return {"||", 1};
    case Op::logical_and: return {"&&", 2};
    case Op::eq: return {"==", 3};
    case Op::ne: return {"!=", 3};
    case Op::lt: return {"<", 4};
    case Op::le: return {"<=", 4};
    case Op::gt: return {">", 4};
    case Op::ge: return {">=", 4};
    case Op::add: return {"+", 5};
    case Op::sub: return {"-", 5};
    case Op::mul: return {"*", 6};
    case Op::div: return {"/", 6};
    case Op::mod: return {"%", 6};
  }
  return {"?", 0};
}

const char* func_name(Func f) {
  switch (f) {
    case Func::ceil_div: return "ceil_div";
    case Func::min: return "min";
    case Func::max: return "max";
  }
  return "?";
}

// Recursive-descent parser over one line of spec text.
class Parser {
 public:
  Parser(const std::string& text, const SourceLoc& loc, Diagnostics& diags, Columns columns)
      : text_(text), base_(loc), diags_(diags), columns_(columns) {}

  std::optional<Expr> parse_all() {
    skip_space();
    if (pos_ >= text_.size()) return fail(pos_, "empty expression", "write an integer expression, e.g. `ceil_div(n, 32)`");
    auto e = parse_binary(1);
    if (!e) return std::nullopt;
    skip_space();
    if (pos_ < text_.size()) return fail(pos_, fmt::format("unexpected `{}` in expression", text_.substr(pos_, 1)), kGrammarHint);
    return e;
  }

 private:
  static constexpr int kMaxDepth = kMaxExpressionDepth;
  static constexpr const char* kGrammarHint =
      "expressions use integers, names, + - * / %, comparisons, && ||, ceil_div(a, b), min(a, b), "
      "max(a, b), sizeof(T)";

  SourceLoc at(size_t pos) const {
    SourceLoc l = base_;
    if (l.column > 0 && columns_ == Columns::advance) l.column += static_cast<int>(pos);
    return l;
  }
  std::nullopt_t fail(size_t pos, std::string message, std::string hint) {
    diags_.error(ErrorKind::bad_expression, at(pos), std::move(message), std::move(hint));
    return std::nullopt;
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool accept(std::string_view token) {
    skip_space();
    if (text_.compare(pos_, token.size(), token) != 0) return false;
    pos_ += token.size();
    return true;
  }

  std::optional<Op> peek_op(int precedence) {
    skip_space();
    static const std::pair<const char*, Op> ops[] = {
        {"||", Op::logical_or}, {"&&", Op::logical_and}, {"==", Op::eq}, {"!=", Op::ne}, {"<=", Op::le},
        {">=", Op::ge},         {"<", Op::lt},           {">", Op::gt},  {"+", Op::add}, {"-", Op::sub},
        {"*", Op::mul},         {"/", Op::div},          {"%", Op::mod}};
    for (const auto& [text, op] : ops) {
      if (info(op).precedence == precedence && text_.compare(pos_, std::strlen(text), text) == 0) return op;
    }
    return std::nullopt;
  }

  std::optional<Expr> parse_binary(int precedence) {
    if (precedence > 6) return parse_unary();
    auto lhs = parse_binary(precedence + 1);
    while (lhs) {
      auto op = peek_op(precedence);
      if (!op) break;
      pos_ += std::strlen(info(*op).text);
      auto rhs = parse_binary(precedence + 1);
      if (!rhs) return std::nullopt;
      SourceLoc loc = lhs->loc;
      Expr e = Expr::node(Expr::Kind::binary, loc, {std::move(*lhs), std::move(*rhs)});
      e.op = *op;
      lhs = std::move(e);
      // Comparisons do not chain: `a < b < c` means something else in C than in maths.
      if (precedence == 3 || precedence == 4) break;
    }
    return lhs;
  }

  std::optional<Expr> parse_unary() {
    skip_space();
    size_t start = pos_;
    // Every nesting level (a parenthesis, a call argument, a unary operator) passes through here;
    // bounding it keeps a hostile spec from overflowing the stack of this recursive parser.
    DepthGuard guard(depth_);
    if (depth_ > kMaxDepth) {
      return fail(start, fmt::format("expression nests deeper than {} levels", kMaxDepth),
                  "simplify the expression: split it, or drop redundant parentheses and signs");
    }
    for (auto [token, kind] : {std::pair{"-", Expr::Kind::negate}, std::pair{"!", Expr::Kind::logical_not}}) {
      if (accept(token)) {
        auto operand = parse_unary();
        if (!operand) return std::nullopt;
        return Expr::node(kind, at(start), {std::move(*operand)});
      }
    }
    return parse_primary();
  }

  std::optional<Expr> parse_primary() {
    skip_space();
    size_t start = pos_;
    if (pos_ >= text_.size()) return fail(pos_, "expression ends too early", kGrammarHint);
    char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c))) return parse_integer();
    if (accept("(")) {
      auto inner = parse_binary(1);
      if (!inner) return std::nullopt;
      if (!accept(")")) return fail(pos_, "missing `)`", "every `(` needs a matching `)`");
      return inner;
    }
    if (!std::isalpha(static_cast<unsigned char>(c)) && c != '_') {
      return fail(start, fmt::format("unexpected `{}` in expression", c), kGrammarHint);
    }
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
    std::string name = text_.substr(start, pos_ - start);
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == '(') return parse_call(name, start);
    return Expr::leaf(Expr::Kind::symbol, at(start), 0, name);
  }

  std::optional<Expr> parse_integer() {
    size_t start = pos_;
    int64_t v = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      int digit = text_[pos_++] - '0';
      if (v > (INT64_MAX - digit) / 10) return fail(start, "integer literal too large", "values must fit in 64 bits");
      v = v * 10 + digit;
    }
    if (pos_ < text_.size() && (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.')) {
      return fail(start, "expressions are integer-only", "drop suffixes and fractions; use integer arithmetic");
    }
    return Expr::leaf(Expr::Kind::integer, at(start), v);
  }

  std::optional<Expr> parse_call(const std::string& name, size_t start) {
    ++pos_;  // '('
    if (name == "sizeof") {
      skip_space();
      size_t type_start = pos_;
      while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
      std::string type = text_.substr(type_start, pos_ - type_start);
      if (type.empty() || !accept(")")) return fail(type_start, "sizeof takes one type parameter name", "e.g. `sizeof(T)`");
      return Expr::leaf(Expr::Kind::size_of, at(start), 0, type);
    }
    static const std::pair<const char*, Func> funcs[] = {
        {"ceil_div", Func::ceil_div}, {"min", Func::min}, {"max", Func::max}};
    const Func* func = nullptr;
    for (const auto& [fname, f] : funcs) {
      if (name == fname) func = &f;
    }
    if (!func) {
      return fail(start, fmt::format("unknown function `{}`", name),
                  "available functions: ceil_div(a, b), min(a, b), max(a, b), sizeof(T)");
    }
    Expr e = Expr::node(Expr::Kind::call, at(start), {});
    e.func = *func;
    for (int i = 0; i < 2; ++i) {
      auto arg = parse_binary(1);
      if (!arg) return std::nullopt;
      e.operands.push_back(std::move(*arg));
      if (!accept(i == 0 ? "," : ")")) {
        return fail(pos_, fmt::format("{}() takes two arguments", name),
                    fmt::format("write `{}(a, b)`; inside a YAML list `[...]`, quote an expression that contains "
                                "a comma: `[\"{}(a, b)\", c]`",
                                name, name));
      }
    }
    return e;
  }

  struct DepthGuard {
    explicit DepthGuard(int& depth) : depth_(depth) { ++depth_; }
    ~DepthGuard() { --depth_; }
    int& depth_;
  };

  const std::string& text_;
  SourceLoc base_;
  Diagnostics& diags_;
  Columns columns_;
  size_t pos_ = 0;
  int depth_ = 0;
};

int64_t apply(Op op, int64_t a, int64_t b, const Expr& e) {
  switch (op) {
    case Op::add:
    case Op::sub:
    case Op::mul: {
      int64_t r = 0;
      bool overflow = op == Op::add ? __builtin_add_overflow(a, b, &r)
                      : op == Op::sub ? __builtin_sub_overflow(a, b, &r)
                                      : __builtin_mul_overflow(a, b, &r);
      if (overflow) throw EvalError{fmt::format("`{}` overflows 64 bits", to_source(e))};
      return r;
    }
    case Op::div:
    case Op::mod:
      if (b == 0) throw EvalError{fmt::format("division by zero in `{}`", to_source(e))};
      // The one quotient that does not fit: the CPU traps (SIGFPE) on it, for `%` as well.
      if (a == INT64_MIN && b == -1) throw EvalError{fmt::format("`{}` overflows 64 bits", to_source(e))};
      return op == Op::div ? a / b : a % b;
    case Op::eq: return a == b;
    case Op::ne: return a != b;
    case Op::lt: return a < b;
    case Op::le: return a <= b;
    case Op::gt: return a > b;
    case Op::ge: return a >= b;
    case Op::logical_and: return a && b;
    case Op::logical_or: return a || b;
  }
  return 0;
}

// `inline_ceil_div`: ceil_div renders as its expansion, a division, and binds like one.
int precedence_of(const Expr& e, bool inline_ceil_div) {
  switch (e.kind) {
    case Expr::Kind::call: return inline_ceil_div && e.func == Func::ceil_div ? 6 : 8;
    case Expr::Kind::binary: return info(e.op).precedence;
    case Expr::Kind::negate:
    case Expr::Kind::logical_not: return 7;
    default: return 8;
  }
}

// `right` operands of non-commutative operators need parentheses at equal precedence.
std::string render_operand(const Expr& child, int parent_precedence, bool right, bool inline_ceil_div,
                           const std::function<std::string(const Expr&)>& r) {
  int p = precedence_of(child, inline_ceil_div);
  bool comparisons = (p == 3 || p == 4) && (parent_precedence == 3 || parent_precedence == 4);
  bool paren = p < parent_precedence || (right && p == parent_precedence) || comparisons;
  std::string text = r(child);
  return paren ? "(" + text + ")" : text;
}

// ceil_div(a, b) as (a + b - 1) / b, for targets without a helper function.
Expr expand_ceil_div(const Expr& e) {
  auto binary = [&](Op op, Expr l, Expr r) {
    Expr b = Expr::node(Expr::Kind::binary, e.loc, {std::move(l), std::move(r)});
    b.op = op;
    return b;
  };
  Expr one = Expr::leaf(Expr::Kind::integer, e.loc, 1);
  return binary(Op::div, binary(Op::sub, binary(Op::add, e.operands[0], e.operands[1]), one), e.operands[1]);
}

using CallRenderer = std::function<std::optional<std::string>(Func, const std::string&, const std::string&)>;

std::string render_with(const Expr& e, const std::function<std::string(const Expr&)>& leaf,
                        const CallRenderer& call, bool inline_ceil_div) {
  std::function<std::string(const Expr&)> self = [&](const Expr& x) {
    return render_with(x, leaf, call, inline_ceil_div);
  };
  switch (e.kind) {
    case Expr::Kind::integer:
    case Expr::Kind::symbol:
    case Expr::Kind::size_of: return leaf(e);
    case Expr::Kind::negate: {
      std::string operand = render_operand(e.operands[0], 7, false, inline_ceil_div, self);
      return operand[0] == '-' ? "-(" + operand + ")" : "-" + operand;  // never `--`, a decrement
    }
    case Expr::Kind::logical_not: return "!" + render_operand(e.operands[0], 7, false, inline_ceil_div, self);
    case Expr::Kind::binary: {
      int p = info(e.op).precedence;
      return fmt::format("{} {} {}", render_operand(e.operands[0], p, false, inline_ceil_div, self), info(e.op).text,
                         render_operand(e.operands[1], p, true, inline_ceil_div, self));
    }
    case Expr::Kind::call: {
      if (auto text = call(e.func, self(e.operands[0]), self(e.operands[1]))) return *text;
      return self(expand_ceil_div(e));
    }
  }
  return {};
}

}  // namespace

std::optional<Expr> parse(const std::string& text, const SourceLoc& loc, Diagnostics& diags, Columns columns) {
  return Parser(text, loc, diags, columns).parse_all();
}

int64_t evaluate(const Expr& e, const Env& env) {
  switch (e.kind) {
    case Expr::Kind::integer: return e.value;
    case Expr::Kind::symbol: {
      auto it = env.symbols.find(e.name);
      if (it == env.symbols.end()) throw EvalError{fmt::format("`{}` has no value here", e.name)};
      return it->second;
    }
    case Expr::Kind::size_of: {
      auto it = env.type_sizes.find(e.name);
      if (it == env.type_sizes.end()) throw EvalError{fmt::format("sizeof({}) has no value here", e.name)};
      return it->second;
    }
    case Expr::Kind::negate: {
      int64_t v = evaluate(e.operands[0], env);
      if (v == INT64_MIN) throw EvalError{fmt::format("`{}` overflows 64 bits", to_source(e))};
      return -v;
    }
    case Expr::Kind::logical_not: return !evaluate(e.operands[0], env);
    case Expr::Kind::binary: return apply(e.op, evaluate(e.operands[0], env), evaluate(e.operands[1], env), e);
    case Expr::Kind::call: {
      int64_t a = evaluate(e.operands[0], env);
      int64_t b = evaluate(e.operands[1], env);
      if (e.func == Func::min) return std::min(a, b);
      if (e.func == Func::max) return std::max(a, b);
      if (b <= 0) throw EvalError{fmt::format("ceil_div by {} in `{}`", b, to_source(e))};
      // The value of the generated code's (a + b - 1) / b, computed without overflowing for a
      // near INT64_MAX (for a < 0 the sum cannot overflow).
      return a >= 0 ? a / b + (a % b != 0) : (a + b - 1) / b;
    }
  }
  return 0;
}

std::string render(const Expr& e, const Spelling& s) {
  auto leaf = [&](const Expr& x) -> std::string {
    if (x.kind == Expr::Kind::integer) return std::to_string(x.value);
    if (x.kind == Expr::Kind::symbol) return s.symbol(x.name);
    return s.size_of(x.name);
  };
  auto call = [&](Func f, const std::string& a, const std::string& b) -> std::optional<std::string> {
    if (f == Func::min) return fmt::format("{}({}, {})", s.min_fn, a, b);
    if (f == Func::max) return fmt::format("{}({}, {})", s.max_fn, a, b);
    if (!s.ceil_div_fn.empty()) return fmt::format("{}({}, {})", s.ceil_div_fn, a, b);
    return std::nullopt;
  };
  return render_with(e, leaf, call, s.ceil_div_fn.empty());
}

Expr product(const std::vector<Expr>& factors) {
  if (factors.empty()) return Expr::leaf(Expr::Kind::integer, {}, 1);
  Expr out = factors[0];
  for (size_t i = 1; i < factors.size(); ++i) {
    Expr mul = Expr::node(Expr::Kind::binary, out.loc, {std::move(out), factors[i]});
    mul.op = Op::mul;
    out = std::move(mul);
  }
  return out;
}

std::string to_source(const Expr& e) {
  auto leaf = [](const Expr& x) -> std::string {
    if (x.kind == Expr::Kind::integer) return std::to_string(x.value);
    if (x.kind == Expr::Kind::symbol) return x.name;
    return "sizeof(" + x.name + ")";
  };
  auto call = [](Func f, const std::string& a, const std::string& b) -> std::optional<std::string> {
    return fmt::format("{}({}, {})", func_name(f), a, b);
  };
  return render_with(e, leaf, call, false);
}

}  // namespace mtlgen::expr
