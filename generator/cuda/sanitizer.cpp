// compute-sanitizer on a case's program: memcheck, racecheck, synccheck and initcheck, their
// findings cut to what names the kernel's own lines, each .metal line with its spec line.
#include <fmt/format.h>

#include <regex>
#include <sstream>

#include "cuda/gpu_run.h"
#include "emit_msl/msl_emitter.h"

namespace mtlgen::cuda {

namespace {

const char* kSanitizerTools[] = {"memcheck", "racecheck", "synccheck", "initcheck"};

// A .metal file a program runs: its kernel and text (empty for a hand-written file, whose lines
// are its own).
struct MetalFile {
  const ir::Kernel* kernel;
  std::string msl;
};

// The .metal files of `k`'s program by file name: a family's kernels', else its own.
std::map<std::string, MetalFile> metal_files(const ir::Kernel& k) {
  std::map<std::string, MetalFile> files;
  auto add = [&](const ir::Kernel& m) {
    files[m.name + ".metal"] = {&m, m.is_source() ? std::string() : emit::msl_source(m)};  // emit_cuda's name
  };
  if (!k.is_family()) add(k);
  else
    for (const auto& m : k.family->kernels) add(m);
  return files;
}

// "… in /cache/cuda/argmax-…/cuda/argmax/argmax.metal:45" -> "… at line 45 (specs/argmax.yaml:38)".
std::string located(const std::map<std::string, MetalFile>& files, const std::string& text) {
  static const std::regex kWhere(R"((?:\S*/)?([A-Za-z0-9_.-]+\.metal):(\d+))");
  std::string out;
  auto begin = std::sregex_iterator(text.begin(), text.end(), kWhere);
  size_t at = 0;
  for (auto m = begin; m != std::sregex_iterator(); ++m) {
    out += text.substr(at, static_cast<size_t>(m->position()) - at);
    int line = std::stoi((*m)[2]);
    auto file = files.find((*m)[1].str());
    std::string note = file == files.end() ? "" : verify::spec_line_note(*file->second.kernel, file->second.msl, line);
    out += fmt::format("line {} of {}{}", line, (*m)[1].str(), note);
    at = static_cast<size_t>(m->position() + m->length());
  }
  return out + text.substr(at);
}

// A line of a report worth showing: not the banner, a summary of none, host backtraces, saved
// values or the generated wrapper's frame (the kernel's own frames name the .metal lines).
bool worth_showing(const std::string& body) {
  for (const char* noise : {"COMPUTE-SANITIZER", "ERROR SUMMARY: 0 ", "SUMMARY: 0 hazards", "Host Frame",
                            "Saved host backtrace", "Current Value", "Device Frame: mtlcu_kernel_"})
    if (body.find(noise) != std::string::npos) return false;
  return body.find_first_not_of(' ') != std::string::npos;
}

// compute-sanitizer's findings, its `=========` lines: a frame's signature dropped (`at` or
// `Device Frame:` then the .metal line), lines that differ only in addresses shown once (a hazard
// repeats per byte), at most 16.
std::string sanitizer_findings(const std::string& output) {
  static const std::regex kFrame(R"(((?:at|Device Frame:) )(?:void )?\S.*\+0x[0-9a-f]+ in )"), kAddress("0x[0-9a-f]+");
  std::vector<std::string> seen;
  std::string found;
  size_t more = 0;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("========= ", 0) != 0 || !worth_showing(line.substr(10))) continue;
    std::string body = std::regex_replace(line.substr(10), kFrame, "$1");
    std::string key = std::regex_replace(body, kAddress, "0x");
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(key);
    if (seen.size() > 16) ++more;
    else found += "      " + body + "\n";
  }
  if (more) found += fmt::format("      ({} more lines)\n", more);
  return found;
}

}  // namespace

std::vector<std::string> sanitizer_problems(const ir::Kernel& k, const fs::path& exe, const fs::path& dir,
                                            double timeout) {
  std::vector<std::string> problems;
  const auto files = metal_files(k);
  for (const char* tool : kSanitizerTools) {
    std::vector<std::string> argv = {"compute-sanitizer", "--tool", tool, "--error-exitcode", "99",
                                     "--print-limit", "10", exe.string(), dir.string()};
    if (std::string(tool) == "racecheck") argv.insert(argv.begin() + 3, {"--racecheck-report", "hazard"});
    int status = 0;
    std::string output = verify::run_program(argv, dir, status, timeout * 3);  // the tools slow a kernel down
    std::string found = sanitizer_findings(output);
    if (status == 0 && found.empty()) continue;
    problems.push_back(fmt::format("compute-sanitizer {} (exit {}):\n{}", tool, status, located(files, found)));
  }
  return problems;
}

}  // namespace mtlgen::cuda
