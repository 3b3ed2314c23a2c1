#pragma once
// Deterministic tar.gz: the same files give the same bytes on every run and machine. Entries are
// sorted by path with each directory before its contents, every path lies under one relative root,
// mtime is 0, uid and gid 0 with no owner names, modes 0644 (files), 0755 (directories and
// executables); ustar format, so no extended headers carry times; no name or time in the gzip header.
#include <map>
#include <set>
#include <string>

namespace mtlgen::package {

// `files`: relative '/'-separated path -> bytes; each is stored as `<root>/<path>`.
// `executables`: the paths among them stored with mode 0755.
std::string deterministic_tar_gz(const std::string& root, const std::map<std::string, std::string>& files,
                                 const std::set<std::string>& executables);

}  // namespace mtlgen::package
