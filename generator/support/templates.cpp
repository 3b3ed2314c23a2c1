#include "support/templates.h"

#include <stdexcept>

#include "support/embedded_files.h"

namespace mtlgen::support {

std::string_view template_file(std::string_view path) {
  for (const auto& f : mtlgen_support_files()) {
    if (f.path == path) return f.bytes;
  }
  throw std::logic_error("no embedded template: " + std::string(path));
}

std::string render_template(std::string_view path, const TemplateData& data) {
  kainjow::mustache::mustache tmpl{std::string(template_file(path))};
  if (!tmpl.is_valid()) {
    throw std::logic_error("template " + std::string(path) + ": " + tmpl.error_message());
  }
  tmpl.set_custom_escape([](const std::string& s) { return s; });
  std::string text = tmpl.render(data);
  // Generated files end with exactly one newline, whatever the template's last section did.
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text + "\n";
}

TemplateData string_list(const std::vector<std::string>& items) {
  TemplateData list{TemplateData::type::list};
  for (const auto& item : items) list.push_back(TemplateData{item});
  return list;
}

}  // namespace mtlgen::support
