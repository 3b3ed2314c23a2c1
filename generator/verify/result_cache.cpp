#include "verify/result_cache.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "support/hash.h"
#include "support/output_set.h"
#include "support/tool_identity.h"

namespace mtlgen::verify {

namespace fs = std::filesystem;

ResultCache::ResultCache(fs::path dir) : dir_(dir.empty() ? dir : dir / "results") {}

std::string ResultCache::key(const CaseIdentity& id) const {
  static const std::string tool = support::tool_identity();
  std::string all = tool + "\n" + id.kernel->spec_path + "\n" + id.kernel->spec_hash + "\n" + id.kernel->name + "\n" +
                    id.variant->entry_point + "\n" + id.test->name + "\n" + id.constants + "\n" + id.options + "\n";
  for (const auto& m : id.modules) all += m.string() + "\n";
  return support::wide_hash_hex(all);
}

std::optional<CaseResult> ResultCache::find(const std::string& key) const {
  if (!enabled()) return std::nullopt;
  std::ifstream in(dir_ / (key + ".json"));
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  try {
    CaseResult r = case_result_from_json(nlohmann::json::parse(text.str()));
    if (r.status == CaseStatus::pass) return r;
  } catch (const std::exception&) {
    // A damaged entry is a miss: the case runs and the entry is replaced.
  }
  return std::nullopt;
}

void ResultCache::keep(const std::string& key, const CaseResult& result) const {
  if (!enabled() || result.status != CaseStatus::pass) return;
  try {
    support::write_file_atomically(dir_ / (key + ".json"), to_json(result).dump() + "\n");
  } catch (const std::exception&) {
    // An unwritable cache costs the next run time, nothing else.
  }
}

}  // namespace mtlgen::verify
