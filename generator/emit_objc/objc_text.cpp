#include "emit_objc/objc_text.h"

#include <fmt/format.h>

#include "emit_common/emitter.h"

namespace mtlgen::emit {

support::TemplateData aligned(size_t colon_column, const std::vector<SelectorPart>& parts) {
  support::TemplateData list{support::TemplateData::type::list};
  for (const auto& p : parts) {
    support::TemplateData item;
    item.set("pad", std::string(colon_column > p.label.size() ? colon_column - p.label.size() : 0, ' '));
    item.set("label", p.label);
    item.set("type", p.type);
    item.set("name", p.value);
    item.set("value", p.value);
    list.push_back(item);
  }
  return list;
}

std::string element_size(const ir::TypeRef& t, const std::string& types) {
  return t.concrete ? std::to_string(ir::info(*t.concrete).size) : fmt::format("mtlgen::dtype_size({}.{})", types, t.param);
}

std::string describe_buffer(const ir::Buffer& b) {
  std::vector<std::string> axes;
  for (const auto& e : b.shape) axes.push_back(expr::to_source(e));
  const std::string type = b.type.concrete ? ir::info(*b.type.concrete).spec_name : b.type.param;
  if (b.intermediate) return fmt::format("{}[{}], intermediate", type, fmt::join(axes, ", "));
  return fmt::format("{}[{}], {}{}", type, fmt::join(axes, ", "), ir::to_string(b.access), b.host_visible ? "" : ", GPU-only");
}

std::string hash_comments(const std::string& slash_comments) {
  std::string out;
  size_t start = 0;
  while (start < slash_comments.size()) {
    size_t end = slash_comments.find('\n', start);
    if (end == std::string::npos) end = slash_comments.size();
    std::string line = slash_comments.substr(start, end - start);
    if (line.rfind("//", 0) == 0) line = "#" + line.substr(2);
    out += line + (end < slash_comments.size() ? "\n" : "");
    start = end + 1;
  }
  return out;
}

}  // namespace mtlgen::emit
