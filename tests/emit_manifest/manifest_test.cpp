// manifest.json: one snapshot for the shipped library (specs/) and one per input under
// tests/emit_objc/in, then properties: it lists exactly the generated files, mirrors the IR's
// variants and binding table, and is stable under a parse/dump round trip.
#include <nlohmann/json.hpp>

#include "emit_common/emitter.h"
#include "emit_manifest/manifest_emitter.h"
#include "golden.h"

namespace mtlgen::testing {
namespace {

using Json = nlohmann::ordered_json;

const fs::path kGolden = "tests/emit_manifest/golden";

std::vector<std::string> cases() {
  std::vector<std::string> names;  // the shipped library's manifest is pinned by out_is_fresh
  for (const auto& spec : snapshot_specs("tests/emit_objc/in")) names.push_back(spec);
  return names;
}

std::string case_name(const std::string& input) { return input == "specs" ? "specs" : stem(input); }

class ManifestGolden : public ::testing::TestWithParam<std::string> {};

// manifest.json as `generate` writes it: after the registered emitters, listing their files.
support::OutputSet manifest_only(const std::vector<ir::Kernel>& kernels) {
  support::OutputSet out;
  out.add(emit::kManifestPath, driver::generate(kernels).files().at(emit::kManifestPath));
  return out;
}

TEST_P(ManifestGolden, MatchesSnapshot) {
  expect_matches_golden(manifest_only(load({GetParam()})), kGolden / case_name(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Libraries, ManifestGolden, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return case_name(info.param); });

Json manifest_of(const std::vector<ir::Kernel>& kernels) {
  return Json::parse(emit::manifest_json(kernels, emit::generated_files(kernels)));
}

TEST(Manifest, ListsExactlyTheFilesGenerationWrites) {
  auto kernels = load({"specs", "tests/emit_objc/in"});
  Json m = manifest_of(kernels);
  std::vector<std::string> listed = m["library_files"].get<std::vector<std::string>>();
  for (const char* section : {"kernels", "families"}) {
    for (const auto& k : m[section]) {
      for (const auto& f : k["files"]) {
        EXPECT_EQ(f.get<std::string>().rfind(k["name"].get<std::string>() + "/", 0), 0u) << f;
        listed.push_back(f.get<std::string>());
      }
    }
  }
  std::sort(listed.begin(), listed.end());
  const support::OutputSet generated = driver::generate(kernels);
  std::vector<std::string> written;
  for (const auto& [path, content] : generated.files()) written.push_back(path);
  EXPECT_EQ(listed, written);
}

TEST(Manifest, MirrorsVariantsAndBindingTable) {
  auto all = load({"specs", "tests/emit_objc/in"});
  Json m = manifest_of(all);
  std::vector<ir::Kernel> kernels;
  std::copy_if(all.begin(), all.end(), std::back_inserter(kernels), [](const ir::Kernel& k) { return !k.is_family(); });
  ASSERT_EQ(m["kernels"].size(), kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) {
    const auto& k = kernels[i];
    const Json& j = m["kernels"][i];
    EXPECT_EQ(j["name"], k.name);
    ASSERT_EQ(j["variants"].size(), k.variants.size());
    for (size_t v = 0; v < k.variants.size(); ++v) {
      const Json& jv = j["variants"][v];
      EXPECT_EQ(jv["entry_point"], k.variants[v].entry_point);
      EXPECT_EQ(jv["default"], k.variants[v].is_default_tuning);
      EXPECT_EQ(jv["max_total_threads_per_threadgroup"], k.variants[v].threads_per_threadgroup);
      for (size_t a = 0; a < k.threadgroup_arrays.size(); ++a) {
        int64_t bytes = jv["threadgroup_memory_bytes"][k.threadgroup_arrays[a].name];
        EXPECT_EQ(bytes % 16, 0);
        EXPECT_GE(bytes, k.variants[v].threadgroup_array_bytes[a]);
        EXPECT_LT(bytes, k.variants[v].threadgroup_array_bytes[a] + 16);
      }
    }
    ASSERT_EQ(j["bindings"].size(), k.params.size());
    for (size_t p = 0; p < k.params.size(); ++p) {
      if (k.params[p].kind == ir::KernelParam::Kind::builtin) continue;
      EXPECT_EQ(j["bindings"][p]["index"], k.params[p].index) << k.name << " binding " << p;
    }
    for (size_t p = 0; p < k.preconditions.size(); ++p) {
      EXPECT_EQ(j["preconditions"][p]["check"], expr::to_source(k.preconditions[p].check));
      EXPECT_EQ(j["preconditions"][p]["message"], k.preconditions[p].message);
      EXPECT_EQ(j["preconditions"][p]["per_variant"], k.preconditions[p].per_variant);
    }
  }
}

// A family: its kernels in dispatch order, each dispatch's bindings, intermediates with their
// shapes; its kernels listed as kernels naming it.
TEST(Manifest, ListsFamiliesWithTheirDispatchesAndIntermediates) {
  Json m = manifest_of(load({"tests/emit_objc/in/glue_family.yaml"}));
  ASSERT_EQ(m["families"].size(), 1u);
  const Json& f = m["families"][0];
  EXPECT_EQ(f["name"], "glue_family");
  EXPECT_EQ(f["spec"]["path"], "tests/emit_objc/in/glue_family.yaml");
  EXPECT_EQ(f["kernels"], Json::array({"chunk_sum", "combine", "normalize"}));
  EXPECT_EQ(f["dispatches"][0]["dims"]["chunks"], "ceil_div(n, 256)");
  EXPECT_EQ(f["dispatches"][0]["buffers"]["sums"], "partial");
  EXPECT_EQ(f["dispatches"][1]["types"]["Acc"], "float");
  EXPECT_EQ(f["dispatches"][2]["scalars"]["eps"], "epsilon");
  EXPECT_EQ(f["buffers"][1]["name"], "partial");
  EXPECT_EQ(f["buffers"][1]["intermediate"], true);
  EXPECT_EQ(f["buffers"][1]["shape"], Json::array({"rows", "ceil_div(n, 256)"}));
  EXPECT_FALSE(f["buffers"][0].contains("intermediate"));
  ASSERT_EQ(m["kernels"].size(), 3u);
  for (const auto& k : m["kernels"]) EXPECT_EQ(k["family"], "glue_family");
  EXPECT_FALSE(manifest_of(load({"specs/rms_norm.yaml"}))["kernels"][0].contains("family"));
}

TEST(Manifest, MarksPreconditionsThatHoldPerVariant) {
  Json single_row = manifest_of(load({"specs/rms_norm_single_row.yaml"}))["kernels"][0];
  EXPECT_EQ(single_row["preconditions"][0]["check"], "n <= TG * N_READS");
  EXPECT_EQ(single_row["preconditions"][0]["per_variant"], true);
  Json sdpa = manifest_of(load({"specs/sdpa_vector.yaml"}))["kernels"][0];
  EXPECT_EQ(sdpa["preconditions"][0]["check"], "n_heads % n_kv_heads == 0");
  EXPECT_EQ(sdpa["preconditions"][0]["per_variant"], false);
}

// generate hands the manifest what the backends wrote instead of running them again: the result
// must be the manifest that asking them gives.
TEST(Manifest, FromAllBackendsEqualsTheManifestTheyDescribe) {
  auto kernels = load({"specs", "tests/emit_objc/in"});
  auto all = driver::generate(kernels).files();
  ASSERT_TRUE(all.count(emit::kManifestPath));
  EXPECT_EQ(all.at(emit::kManifestPath), emit::manifest_json(kernels, emit::generated_files(kernels)));
}

TEST(Manifest, IsCanonicalJson) {
  std::string text = emit::manifest_json(load({"specs"}), emit::generated_files(load({"specs"})));
  EXPECT_EQ(Json::parse(text).dump(2) + "\n", text);
  Json m = Json::parse(text);
  EXPECT_NE(m["generated_by"].get<std::string>().find("mtlgen"), std::string::npos);
  EXPECT_TRUE(m.contains("do_not_edit"));
}

// The driver adds the manifest after the emitters; it is none of them, and they do not write it.
TEST(Manifest, IsNotARegisteredEmitter) {
  EXPECT_THROW(emit::find_emitter("manifest"), std::out_of_range);
  EXPECT_EQ(emit::generate_all(load({"specs"})).files().count(emit::kManifestPath), 0u);
}

}  // namespace
}  // namespace mtlgen::testing
