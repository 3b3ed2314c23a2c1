#pragma once
// Integer expressions for shapes, grids, constraints and cost: parsed once from spec text into this
// tree, then evaluated by the tool and rendered as C-family text for MSL, C++ and Objective-C++,
// so that every consumer computes the same value from the same tree.
//
// Grammar (C precedence):  expr := or ; or := and ('||' and)* ; and := cmp ('&&' cmp)* ;
//   cmp := sum (('=='|'!='|'<'|'<='|'>'|'>=') sum)? ; sum := term (('+'|'-') term)* ;
//   term := unary (('*'|'/'|'%') unary)* ; unary := ('-'|'!') unary | primary ;
//   primary := INT | IDENT | IDENT '(' args ')' | '(' expr ')'
// Functions: ceil_div(a, b), min(a, b), max(a, b), sizeof(TypeParam).
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "support/diagnostics.h"

namespace mtlgen::expr {

enum class Op { add, sub, mul, div, mod, eq, ne, lt, le, gt, ge, logical_and, logical_or };
enum class Func { ceil_div, min, max };

struct Expr {
  enum class Kind { integer, symbol, size_of, negate, logical_not, binary, call };
  Kind kind = Kind::integer;
  int64_t value = 0;          // integer
  std::string name;           // symbol, size_of (the type parameter)
  Op op = Op::add;            // binary
  Func func = Func::min;      // call
  std::vector<Expr> operands; // negate/not: 1, binary/call: 2
  support::SourceLoc loc;     // where this node starts in the spec

  static Expr leaf(Kind kind, support::SourceLoc loc, int64_t value = 0, std::string name = {}) {
    Expr e;
    e.kind = kind;
    e.value = value;
    e.name = std::move(name);
    e.loc = std::move(loc);
    return e;
  }
  static Expr node(Kind kind, support::SourceLoc loc, std::vector<Expr> operands) {
    Expr e;
    e.kind = kind;
    e.operands = std::move(operands);
    e.loc = std::move(loc);
    return e;
  }

  // Every symbol (and sizeof type parameter) the tree mentions.
  void collect_symbols(std::set<std::string>& out) const;
  bool is_boolean() const;
};

// Nesting levels (parentheses, call arguments, unary operators) an expression may have; deeper
// ones are rejected as a located error rather than recursed into.
inline constexpr int kMaxExpressionDepth = 100;

// How the parsed text lies at its location: `advance` when the text is written there as is (each
// node's column advances with the text); `fixed` when it is not (a YAML alias `*name` standing for
// an anchored value, a quoted string with escapes): every node is located at `loc` itself.
enum class Columns { advance, fixed };

// Parses `text`, which starts at `loc` in the spec. Errors go to `diags`; nullopt on failure.
std::optional<Expr> parse(const std::string& text, const support::SourceLoc& loc,
                          support::Diagnostics& diags, Columns columns = Columns::advance);

// Values of symbols, and the byte size of each type parameter named in sizeof().
struct Env {
  std::map<std::string, int64_t> symbols;
  std::map<std::string, int64_t> type_sizes;
};

struct EvalError {
  std::string message;
};

// Evaluates in 64-bit signed arithmetic. Division by zero and unknown symbols are errors.
int64_t evaluate(const Expr& e, const Env& env);  // throws EvalError

// How a target spells leaves. Operators and precedence are common to all C-family targets.
struct Spelling {
  std::function<std::string(const std::string& symbol)> symbol;
  std::function<std::string(const std::string& type_param)> size_of;
  std::string min_fn = "min";  // e.g. "std::min<int64_t>" on the host
  std::string max_fn = "max";
  std::string ceil_div_fn;     // empty: rendered inline as (a + b - 1) / b
};

// Renders with minimal parentheses, in C precedence. The text is a complete expression that keeps
// its meaning as an operand of any C operator only when the caller parenthesises it: to combine
// expressions, build a tree (e.g. with product()) and render that instead of pasting texts.
std::string render(const Expr& e, const Spelling& spelling);

// a0 * a1 * ... as one tree (the integer 1 for no factors), so that rendering it parenthesises
// each factor by precedence: `[a, "ceil_div(n, TG)"]` is `a * ((n + TG - 1) / TG)`.
Expr product(const std::vector<Expr>& factors);

// The spec's own spelling, for messages and the manifest.
std::string to_source(const Expr& e);

}  // namespace mtlgen::expr
