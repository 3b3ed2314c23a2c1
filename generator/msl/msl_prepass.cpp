// The pre-pass: MSL attributes that clang would drop become macros for GNU `annotate`
// attributes, which clang keeps on the declaration (explicit instantiations included). Every
// respelling has the length of what it replaces, so lines and columns stay the user's. It works
// on the raw text, so attributes inside macro definitions (MLX's instantiate_kernel) are
// respelled too; comments and literals are left alone. A half literal's `H` becomes `h`.
#include <array>
#include <cctype>
#include <cstring>
#include <string_view>
#include <vector>

#include "msl/msl_internal.h"

namespace mtlgen::msl {

namespace {

enum class Style {
  macro_call,  // `[[name(args)]]` -> `MACRO(args)  `: the brackets go, a macro takes the name
  bare_word,   // `[[kernel]]` -> `  kernel  `: the word is a macro
  rename,      // `[[threadgroup(0)]]` -> `[[mtlsim_tgrp(0)]]`: an attribute clang ignores,
               // since the empty `threadgroup` macro would leave `[[(0)]]`
};

struct Respelling {
  std::string_view attribute;  // as written inside [[...]]
  std::string_view macro;      // the replacement word (no longer than `[[ attribute`)
  Style style;
  bool ends_declaration = false;  // only where `;` follows: the macro closes the declaration
};

// `[[host_name("x")]]` -> `__MTL_HOSTN("x")  `: same 12 characters before the argument; a
// shorter macro ends where the attribute's name ends.
constexpr std::array kRespellings = {
    Respelling{"host_name", "__MTL_HOSTN", Style::macro_call},
    Respelling{"max_total_threads_per_threadgroup", "__MTL_MAXTPT", Style::macro_call},
    Respelling{"kernel", "kernel", Style::bare_word},
    Respelling{"threadgroup", kThreadgroupAttribute, Style::rename},
    // `constant T x [[function_constant(FC_BASE + 1)]];` -> an enumerator after the declaration,
    // so that clang evaluates the index (describe reads it); kernel parameters keep theirs.
    Respelling{"function_constant", "__MTL_FCONST", Style::macro_call, true},
};
static_assert(kThreadgroupAttribute.size() == std::string_view("threadgroup").size());

bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

size_t skip_blanks(const std::string& s, size_t i) {
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return i;
}

// End of the literal or comment starting at i (i itself when there is none).
size_t skip_literal_or_comment(const std::string& s, size_t i) {
  if (s.compare(i, 2, "//") == 0) {
    size_t e = s.find('\n', i);
    return e == std::string::npos ? s.size() : e;
  }
  if (s.compare(i, 2, "/*") == 0) {
    size_t e = s.find("*/", i + 2);
    return e == std::string::npos ? s.size() : e + 2;
  }
  if (s[i] != '"' && s[i] != '\'') return i;
  char quote = s[i];
  size_t j = i + 1;
  while (j < s.size() && s[j] != quote && s[j] != '\n') j += s[j] == '\\' ? 2 : 1;
  return std::min(j + 1, s.size());
}

// Index of the ')' matching the '(' at `open`, or npos.
size_t matching_paren(const std::string& s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size();) {
    size_t after = skip_literal_or_comment(s, i);
    if (after != i) {
      i = after;
      continue;
    }
    if (s[i] == '(') ++depth;
    if (s[i] == ')' && --depth == 0) return i;
    ++i;
  }
  return std::string::npos;
}

void blank_out(std::string& s, size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i)
    if (s[i] != '\n') s[i] = ' ';
}

const Respelling* respelling_of(std::string_view name) {
  for (const Respelling& r : kRespellings) {
    if (name == r.attribute) return &r;
  }
  return nullptr;
}

// `[[kernel, max_total_threads_per_threadgroup(1024)]]`, as mtlgen emits it: when every item is
// a kernel attribute the pre-pass knows, each is respelled in place (a macro ending where its name
// ends) and the brackets and commas are blanked. Returns npos when this is no such list.
size_t respell_list(std::string& s, size_t open) {
  struct Item {
    const Respelling* r;
    size_t name_begin, name_end, args_end;
  };
  std::vector<Item> items;
  size_t i = skip_blanks(s, open + 2);
  for (;;) {
    size_t name_end = i;
    while (name_end < s.size() && is_ident_char(s[name_end])) ++name_end;
    const Respelling* r = respelling_of(std::string_view(s.data() + i, name_end - i));
    if (!r || r->style == Style::rename || r->ends_declaration) return std::string::npos;
    size_t args_end = name_end;
    size_t next = skip_blanks(s, name_end);
    if (next < s.size() && s[next] == '(') {
      size_t paren = matching_paren(s, next);
      if (paren == std::string::npos) return std::string::npos;
      args_end = paren + 1;
      next = skip_blanks(s, args_end);
    }
    if ((r->style == Style::macro_call) == (args_end == name_end)) return std::string::npos;
    items.push_back({r, i, name_end, args_end});
    if (s.compare(next, 2, "]]") == 0) {
      i = next + 2;
      break;
    }
    if (next >= s.size() || s[next] != ',') return std::string::npos;
    i = skip_blanks(s, next + 1);
  }
  std::string out = s.substr(open, i - open);
  blank_out(out, 0, out.size());
  size_t free_from = 0;  // macros may not overwrite the previous item
  for (const Item& it : items) {
    size_t name_end = it.name_end - open;
    size_t word = it.r->style == Style::macro_call ? it.r->macro.size() : it.name_end - it.name_begin;
    if (name_end < free_from + word) return std::string::npos;
    out.replace(name_end - word, word, it.r->style == Style::macro_call ? it.r->macro : it.r->attribute);
    out.replace(name_end, it.args_end - it.name_end, s, it.name_end, it.args_end - it.name_end);
    free_from = it.args_end - open;
  }
  s.replace(open, out.size(), out);
  return i;
}

// Respells the attribute at `open` ("[[") if it is one of kRespellings; returns where to go on.
size_t respell_at(std::string& s, size_t open) {
  if (size_t after = respell_list(s, open); after != std::string::npos) return after;
  size_t name_begin = skip_blanks(s, open + 2);
  size_t name_end = name_begin;
  while (name_end < s.size() && is_ident_char(s[name_end])) ++name_end;
  std::string_view name(s.data() + name_begin, name_end - name_begin);
  for (const Respelling& r : kRespellings) {
    if (name != r.attribute) continue;
    size_t close = skip_blanks(s, name_end);
    if (r.style == Style::rename) {
      s.replace(name_begin, r.macro.size(), r.macro);
      return name_end;
    }
    if (r.style == Style::bare_word) {
      if (s.compare(close, 2, "]]") != 0) return open + 2;
      blank_out(s, open, name_begin);
      blank_out(s, name_end, close + 2);
      return close + 2;
    }
    if (close >= s.size() || s[close] != '(') return open + 2;
    size_t paren = matching_paren(s, close);
    if (paren == std::string::npos) return open + 2;
    close = skip_blanks(s, paren + 1);
    if (s.compare(close, 2, "]]") != 0) return open + 2;
    if (r.ends_declaration && s.compare(skip_blanks(s, close + 2), 1, ";") != 0) return open + 2;
    blank_out(s, open, name_end);  // the macro ends where the name did: `x[[a(1)]]` keeps a blank
    s.replace(name_end - r.macro.size(), r.macro.size(), r.macro);
    blank_out(s, paren + 1, close + 2);
    return close + 2;
  }
  return open + 2;
}

// The blank-skipping start of the word that ends right before `end` ("" when none).
std::string_view word_before(const std::string& s, size_t end, size_t& begin) {
  while (end > 0 && std::isspace(static_cast<unsigned char>(s[end - 1]))) --end;
  begin = end;
  while (begin > 0 && is_ident_char(s[begin - 1])) --begin;
  return std::string_view(s.data() + begin, end - begin);
}

// `constant` at `i` qualifies `this` (`complex_t(T x) constant : ...`, `operator U() const
// constant`) when a parameter list's `)` ends right before it, `const` between allowed.
bool qualifies_this(const std::string& s, size_t i) {
  size_t begin = 0;
  if (word_before(s, i, begin) == "const") i = begin;
  while (i > 0 && std::isspace(static_cast<unsigned char>(s[i - 1]))) --i;
  return i > 0 && s[i - 1] == ')';
}

// A `constant` that qualifies `this` is blanked: the parse makes `constant` const, and a const
// constructor is no C++ (the member's overloads on address space are one function there).
size_t blank_this_constant(std::string& s, size_t i) {
  constexpr std::string_view kWord = "constant";
  const bool word = s.compare(i, kWord.size(), kWord) == 0 && (i == 0 || !is_ident_char(s[i - 1])) &&
                    (i + kWord.size() >= s.size() || !is_ident_char(s[i + kWord.size()]));
  if (!word) return i;
  if (qualifies_this(s, i)) blank_out(s, i, i + kWord.size());
  return i + kWord.size();
}

// A number at `i` (a pp-number: digits, letters, `.`, and a sign after an exponent's e or p) that
// ends in MSL's half suffix `H` becomes `h`: clang accepts `h` as a literal suffix (the shim
// defines the operator) but rejects `H`. Returns the end of the number (i when there is none).
size_t respell_half_suffix(std::string& s, size_t i) {
  const bool starts = std::isdigit(static_cast<unsigned char>(s[i])) ||
                      (s[i] == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])));
  if (!starts || (i > 0 && is_ident_char(s[i - 1]))) return i;
  size_t end = i + 1;
  while (end < s.size() && (is_ident_char(s[end]) || s[end] == '.' ||
                            ((s[end] == '+' || s[end] == '-') && std::strchr("eEpP", s[end - 1]))))
    ++end;
  if (s[end - 1] == 'H') s[end - 1] = 'h';
  return end;
}

}  // namespace

std::string respell_msl_attributes(std::string text) {
  for (size_t i = 0; i < text.size();) {
    size_t after = skip_literal_or_comment(text, i);
    if (after == i) after = blank_this_constant(text, i);
    if (after == i) after = respell_half_suffix(text, i);
    if (after != i) {
      i = after;
    } else if (text.compare(i, 2, "[[") == 0) {
      i = respell_at(text, i);
    } else {
      ++i;
    }
  }
  return text;
}

std::vector<std::string> prepass_macro_definitions() {
  return {
      "-DMTLSIM_NO_KERNEL_KEYWORD",  // the shim's empty `kernel` would hide entry points
      // Address spaces are keywords, there before any header (MLX's fence.metal declares a
      // `constant` before its first include); the shim's definitions are the same, empty.
      "-Ddevice=", "-Dconstant=", "-Dthread=", "-Dthreadgroup=",
      "-Dkernel=__attribute__((annotate(\"mtl_kernel\")))",
      "-D__MTL_HOSTN(name)=__attribute__((annotate(\"mtl_host_name=\" name)))",
      "-D__MTL_MAXTPT(n)=__attribute__((annotate(\"mtl_max_total_threads_per_threadgroup=\" #n)))",
      // `= {}`: in the parse a `constant` is const (parse_prelude), so it needs an initialiser.
      std::string("-D__MTL_FCONST(e)={};enum:long long{__MTL_FC_NAME(__COUNTER__)=(e)}"),
      std::string("-D__MTL_FC_NAME(n)=__MTL_FC_CAT(") + std::string(kFunctionConstantIndex) + ",n)",
      "-D__MTL_FC_CAT(a,b)=a##b",
  };
}

// In the parse `constant` is `const`, as in the simulator's copy (msl_rewrite.cpp): Metal's
// constant memory is read-only, so ggml passes its `constexpr constant` tables to `constant
// float*` parameters. The shim's empty `constant` is replaced after the shim is read (its
// #pragma once keeps the user's own include from undoing it); a `const` beside it is only a
// warning. The words stay in the user's tokens, which the description reads.
std::string parse_prelude() {
  return "#include <metal_stdlib>\n#undef constant\n#define constant const\n";
}

}  // namespace mtlgen::msl
