// The pre-pass: MSL attributes that clang would drop become macros for GNU `annotate`
// attributes, which clang keeps on the declaration (explicit instantiations included). Every
// respelling has the length of what it replaces, so lines and columns stay the user's. It works
// on the raw text, so attributes inside macro definitions (MLX's instantiate_kernel) are
// respelled too; comments and literals are left alone.
#include <array>
#include <cctype>

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
};

// `[[host_name("x")]]` -> `__MTL_HOSTN("x")  `: same 12 characters before the argument.
constexpr std::array kRespellings = {
    Respelling{"host_name", "__MTL_HOSTN", Style::macro_call},
    Respelling{"max_total_threads_per_threadgroup", "__MTL_MAXTPT", Style::macro_call},
    Respelling{"kernel", "kernel", Style::bare_word},
    Respelling{"threadgroup", kThreadgroupAttribute, Style::rename},
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

// Respells the attribute at `open` ("[[") if it is one of kRespellings; returns where to go on.
size_t respell_at(std::string& s, size_t open) {
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
    blank_out(s, open, name_end);
    s.replace(open, r.macro.size(), r.macro);
    blank_out(s, paren + 1, close + 2);
    return close + 2;
  }
  return open + 2;
}

}  // namespace

std::string respell_msl_attributes(std::string text) {
  for (size_t i = 0; i < text.size();) {
    size_t after = skip_literal_or_comment(text, i);
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
      "-Dkernel=__attribute__((annotate(\"mtl_kernel\")))",
      "-D__MTL_HOSTN(name)=__attribute__((annotate(\"mtl_host_name=\" name)))",
      "-D__MTL_MAXTPT(n)=__attribute__((annotate(\"mtl_max_total_threads_per_threadgroup=\" #n)))",
  };
}

}  // namespace mtlgen::msl
