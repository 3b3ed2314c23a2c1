#include "ir/loop_form.h"

#include <algorithm>
#include <map>

namespace mtlgen::ir {

std::string with_loop_forms(std::string file, const std::vector<LoopFormKernel>& forms, const std::string& header) {
  std::map<int, std::string> after;  // by line of the copy, each insertion written once
  int base = 0;                      // what `#line` adds to a line of the copy
  for (const LoopFormKernel& f : forms) {
    if (f.text.empty() || f.after_line <= 0 || f.header != header) continue;
    const int directive = header.empty() ? 0 : 1;  // a header's copy: its `#line` first
    after[f.after_line + directive] += f.text;
    base = f.line_base - directive;
  }
  if (after.empty()) return file;
  std::string out;
  size_t line_start = 0;
  int line = 1;
  for (const auto& [last, text] : after) {
    size_t end = line_start;  // just past the newline that ends line `last`
    for (; line <= last && end < file.size(); ++line) {
      size_t newline = file.find('\n', end);
      end = newline == std::string::npos ? file.size() : newline + 1;
    }
    out.append(file, line_start, end - line_start);
    if (!out.empty() && out.back() != '\n') out += '\n';
    out += text + (text.ends_with('\n') ? "" : "\n") + "#line " + std::to_string(base + last + 1) + "\n";
    line_start = end;
    line = last + 1;
  }
  return out.append(file, line_start, std::string::npos);
}

}  // namespace mtlgen::ir
