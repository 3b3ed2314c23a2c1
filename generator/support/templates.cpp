#include "support/templates.h"

#include <map>
#include <memory>
#include <stdexcept>

#include "support/embedded_files.h"

namespace mtlgen::support {

std::string_view template_file(std::string_view path) {
  for (const auto& f : mtlgen_support_files()) {
    if (f.path == path) return f.bytes;
  }
  throw std::logic_error("no embedded template: " + std::string(path));
}

namespace {

// The parsed template at `path`. Parsing costs more than rendering and every kernel renders the
// same few templates, so each thread keeps the ones it has parsed.
kainjow::mustache::mustache& parsed_template(std::string_view path) {
  thread_local std::map<std::string, std::unique_ptr<kainjow::mustache::mustache>, std::less<>> cache;
  auto it = cache.find(path);
  if (it != cache.end()) return *it->second;
  auto tmpl = std::make_unique<kainjow::mustache::mustache>(std::string(template_file(path)));
  if (!tmpl->is_valid()) {
    throw std::logic_error("template " + std::string(path) + ": " + tmpl->error_message());
  }
  tmpl->set_custom_escape([](const std::string& s) { return s; });
  return *cache.emplace(std::string(path), std::move(tmpl)).first->second;
}

}  // namespace

std::string render_template(std::string_view path, const TemplateData& data) {
  std::string text = parsed_template(path).render(data);
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
