// The package as files: the recipes' snapshots, manifest.json against its own JSON Schema and its
// hashes against the files, the archive's determinism and normalisation, and `mtlgen package` as
// users run it (incremental writes, exit codes, the shipped library byte-identical across runs).
#include <archive.h>
#include <archive_entry.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "mini_json_schema.h"
#include "package/package_manifest.h"
#include "package_test_util.h"

namespace mtlgen::testing {
namespace {

using nlohmann::json;

json schema() {
  std::ifstream in("templates/package/manifest.schema.json");
  return json::parse(in);
}

// The files of a package that are emitted as text from templates/package.
support::OutputSet recipes(const package::Package& p) {
  support::OutputSet out;
  for (const auto& [path, content] : p.files) {
    if (path == "CMakeLists.txt" || path == "Makefile" || path == "doctor.sh" || path.rfind(".git", 0) == 0) {
      out.add(path, content);
    }
  }
  return out;
}

TEST(PackageTree, RecipesMatchGolden) {
  package::Options github{"small", "2.0", package::Ci::github};
  expect_matches_golden(recipes(build_package(github)), "tests/package/golden/github");
}

TEST(PackageTree, GitlabJobMatchesGoldenAndNoneWritesNoJob) {
  package::Options gitlab{"small", "2.0", package::Ci::gitlab};
  support::OutputSet job;
  job.add(".gitlab-ci.yml", build_package(gitlab).files.at(".gitlab-ci.yml"));
  expect_matches_golden(job, "tests/package/golden/gitlab");
  auto none = build_package({"small", "2.0", package::Ci::none});
  for (const auto& [path, content] : none.files) EXPECT_NE(path.rfind(".git", 0), 0u) << path;
}

TEST(PackageTree, ManifestValidatesAgainstItsSchema) {
  auto p = build_package({});
  json manifest = json::parse(p.files.at("manifest.json"));
  const json s = schema();
  auto errors = MiniValidator(s).validate(manifest);
  EXPECT_TRUE(errors.empty()) << ::testing::PrintToString(errors);
  // The schema ships beside the manifest, byte for byte.
  std::ifstream in("templates/package/manifest.schema.json");
  EXPECT_EQ(p.files.at("manifest.schema.json"), std::string(std::istreambuf_iterator<char>(in), {}));
}

TEST(PackageTree, SchemaRejectsWhatIsNotAManifest) {
  json manifest = json::parse(build_package({}).files.at("manifest.json"));
  const json s = schema();
  json bad_hash = manifest;
  bad_hash["files"][0]["sha256"] = "ABC";
  EXPECT_FALSE(MiniValidator(s).validate(bad_hash).empty());
  json extra = manifest;
  extra["signed"] = true;
  EXPECT_FALSE(MiniValidator(s).validate(extra).empty());
  for (const char* path : {"../x", "/etc/passwd", "a/../../x", "a\\b"}) {
    json escaping = manifest;
    escaping["files"][0]["path"] = path;
    EXPECT_FALSE(MiniValidator(s).validate(escaping).empty()) << path;
  }
  json no_target = manifest;
  no_target["kernels"][0].erase("metal_std");
  EXPECT_FALSE(MiniValidator(s).validate(no_target).empty());
}

TEST(PackageTree, ManifestHashesEveryOtherFileAndNamesEachKernelsTarget) {
  auto p = build_package({"small", "2.0", package::Ci::github});
  json manifest = json::parse(p.files.at("manifest.json"));
  std::set<std::string> listed;
  for (const auto& f : manifest["files"]) {
    std::string path = f["path"];
    listed.insert(path);
    ASSERT_TRUE(p.files.count(path)) << path;
    EXPECT_EQ(f["sha256"], package::sha256_hex(p.files.at(path))) << path;
    EXPECT_EQ(f["size"], p.files.at(path).size()) << path;
    EXPECT_EQ(f["executable"], path == "doctor.sh") << path;
  }
  EXPECT_EQ(listed.size() + 1, p.files.size());  // all but manifest.json itself
  EXPECT_FALSE(listed.count("manifest.json"));
  EXPECT_EQ(package::sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  ASSERT_EQ(manifest["kernels"].size(), 2u);
  EXPECT_EQ(manifest["kernels"][0]["name"], "scale");
  EXPECT_EQ(manifest["kernels"][0]["metal_std"], "metal3.0");
  EXPECT_EQ(manifest["kernels"][0]["min_macos"], "13.0");
  EXPECT_EQ(manifest["kernels"][1]["metal_std"], "metal3.1");
  EXPECT_EQ(manifest["kernels"][1]["min_macos"], "14.0");
  EXPECT_EQ(manifest["kernels"][1]["min_xcode"], "15");
  EXPECT_EQ(manifest["min_macos"], "14.0");
  EXPECT_EQ(manifest["metallib"], "small.metallib");
  EXPECT_EQ(manifest["kernels"][0]["variants"].size(), 4u);  // entry points, from the generated manifest
}

struct ArchiveEntry {
  std::string path;
  std::string content;
  int mode = 0;
  int64_t mtime = -1, uid = -1, gid = -1;
  bool directory = false;
  std::string uname, gname;
};

std::vector<ArchiveEntry> read_archive(const std::string& bytes) {
  std::vector<ArchiveEntry> out;
  std::unique_ptr<struct archive, int (*)(struct archive*)> a(archive_read_new(), archive_read_free);
  archive_read_support_filter_gzip(a.get());
  archive_read_support_format_tar(a.get());
  EXPECT_EQ(archive_read_open_memory(a.get(), bytes.data(), bytes.size()), ARCHIVE_OK);
  struct archive_entry* entry;
  while (archive_read_next_header(a.get(), &entry) == ARCHIVE_OK) {
    ArchiveEntry e;
    e.path = archive_entry_pathname(entry);
    e.mode = archive_entry_perm(entry);
    e.mtime = archive_entry_mtime(entry);
    e.uid = archive_entry_uid(entry);
    e.gid = archive_entry_gid(entry);
    e.directory = archive_entry_filetype(entry) == AE_IFDIR;
    e.uname = archive_entry_uname(entry) ? archive_entry_uname(entry) : "";
    e.gname = archive_entry_gname(entry) ? archive_entry_gname(entry) : "";
    e.content.resize(static_cast<size_t>(archive_entry_size(entry)));
    if (!e.content.empty()) archive_read_data(a.get(), e.content.data(), e.content.size());
    out.push_back(e);
  }
  return out;
}

TEST(Archive, IsDeterministicAndNormalised) {
  auto first = build_package({"small", "2.0", package::Ci::github});
  auto second = build_package({"small", "2.0", package::Ci::github});
  EXPECT_EQ(first.archive_name, "small-2.0-metal.tar.gz");
  ASSERT_EQ(first.archive, second.archive);
  // gzip header: magic, deflate, no flags (no file name), mtime 0.
  ASSERT_GT(first.archive.size(), 10u);
  EXPECT_EQ(first.archive.substr(0, 4), std::string("\x1f\x8b\x08\x00", 4));
  EXPECT_EQ(first.archive.substr(4, 4), std::string(4, '\0'));
  std::vector<std::string> paths;
  for (const auto& e : read_archive(first.archive)) {
    paths.push_back(e.path);
    EXPECT_EQ(e.path.rfind("small-2.0/", 0), 0u) << e.path;
    EXPECT_EQ(e.path.find(".."), std::string::npos) << e.path;
    EXPECT_EQ(e.mtime, 0) << e.path;
    EXPECT_EQ(e.uid, 0) << e.path;
    EXPECT_EQ(e.gid, 0) << e.path;
    EXPECT_EQ(e.uname, "") << e.path;
    EXPECT_EQ(e.gname, "") << e.path;
    EXPECT_EQ(e.mode, e.directory || e.path == "small-2.0/doctor.sh" ? 0755 : 0644) << e.path;
  }
  EXPECT_TRUE(std::is_sorted(paths.begin(), paths.end()));
}

TEST(Archive, HoldsExactlyTheTree) {
  auto p = build_package({"small", "2.0", package::Ci::github});
  std::map<std::string, std::string> files;
  std::set<std::string> directories;
  for (const auto& e : read_archive(p.archive)) {
    if (e.directory) {
      directories.insert(e.path);
    } else {
      files[e.path.substr(std::string("small-2.0/").size())] = e.content;
    }
  }
  EXPECT_EQ(files, p.files);
  for (const auto& [path, content] : p.files) {  // every directory precedes its files, so it exists
    auto slash = path.rfind('/');
    if (slash != std::string::npos) {
      EXPECT_TRUE(directories.count("small-2.0/" + path.substr(0, slash + 1))) << path;
    }
  }
}

TEST(Cli, WritesTheTreeAndTheArchiveThenNothingWhenUnchanged) {
  fs::path dir = scratch_dir();
  fs::path tree = package_with_cli(dir);
  EXPECT_TRUE(fs::is_regular_file(dir / "out/small-2.0-metal.tar.gz"));
  EXPECT_EQ(fs::status(tree / "doctor.sh").permissions() & fs::perms::mask, static_cast<fs::perms>(0755));
  Command again = run(std::string(MTLGEN_BINARY) + " package " + kPackageInputs + " -o " + sh_quote(dir / "out") +
                  " --name small --version 2.0");
  EXPECT_EQ(again.rc, 0);
  EXPECT_NE(again.output.find(": 0 files written"), std::string::npos) << again.output;
  // The archive unpacks to the tree, modes included.
  fs::create_directories(dir / "unpacked");
  Command unpack = run("tar -xzf " + sh_quote(dir / "out/small-2.0-metal.tar.gz") + " -C " + sh_quote(dir / "unpacked") +
                   " && diff -r " + sh_quote(tree) + " " + sh_quote(dir / "unpacked/small-2.0"));
  EXPECT_EQ(unpack.rc, 0) << unpack.output;
  EXPECT_EQ(fs::status(dir / "unpacked/small-2.0/doctor.sh").permissions() & fs::perms::mask,
            static_cast<fs::perms>(0755));
}

TEST(Cli, RejectsBadNamesVersionsAndOutputs) {
  fs::path dir = scratch_dir();
  std::string base = "cd " + sh_quote(dir) + " && " + MTLGEN_BINARY + " package " +
                     sh_quote(fs::current_path() / kPackageInputs);
  for (const char* args : {" -o x --name ../up", " -o x --name ''", " -o x --name 9lives", " -o x --version v1/2",
                           " -o ''", " -o x --ci jenkins"}) {
    Command r = run(base + args);
    EXPECT_EQ(r.rc, 2) << args << "\n" << r.output;
  }
  EXPECT_NE(run(base + " -o x --name 9lives").output.find("--name must start with a letter"), std::string::npos);
  EXPECT_EQ(run(base + " nosuch.yaml -o x").rc, 3);
  EXPECT_TRUE(fs::is_empty(dir));  // nothing written
}

// The shipped library: the one command of the issue, twice, into two directories.
TEST(Cli, ShippedLibraryIsByteIdenticalAcrossRuns) {
  fs::path dir = scratch_dir();
  for (const char* out : {"a", "b"}) {
    Command r = run(std::string(MTLGEN_BINARY) + " package specs -o " + sh_quote(dir / out) + " --name shipped --version 1.0 -q");
    ASSERT_EQ(r.rc, 0) << r.output;
  }
  EXPECT_EQ(read_file(dir / "a/shipped-1.0-metal.tar.gz"), read_file(dir / "b/shipped-1.0-metal.tar.gz"));
  Command same = run("diff -r " + sh_quote(dir / "a") + " " + sh_quote(dir / "b"));
  EXPECT_EQ(same.rc, 0) << same.output;
  json manifest = json::parse(read_file(dir / "a/shipped-1.0/manifest.json"));
  const json s = schema();
  auto errors = MiniValidator(s).validate(manifest);
  EXPECT_TRUE(errors.empty()) << ::testing::PrintToString(errors);
  for (const auto& f : manifest["files"]) {
    EXPECT_EQ(f["sha256"], package::sha256_hex(read_file(dir / "a/shipped-1.0" / f["path"].get<std::string>())));
  }
}

}  // namespace
}  // namespace mtlgen::testing
