// A mutation fuzzer for the spec front end. It mutates spec files line by line and value by value
// (values that broke it before: INT64_MIN / -1, deep nesting, huge names, CR-only line endings,
// duplicate keys, NaN, 2^32) and checks, for every mutant, in a child process with a deadline:
//   * no crash and no hang (over --deadline seconds);
//   * every error is located inside the file (line 1..lines, column >= 1) and has a message;
//   * an accepted spec generates every file in memory, and its body and reference parse
//     (MSL front end and libclang) for the first --compile accepted mutants.
// CTest runs it briefly; `build/tests/fuzz/spec_fuzz --iterations 20000 specs/*.yaml` runs it long.
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "check_msl/check_msl.h"
#include "cli/driver.h"
#include "spec/front_end.h"

namespace fs = std::filesystem;
using namespace mtlgen;

namespace {

struct Options {
  std::vector<std::string> seeds;
  int iterations = 200;
  unsigned seed = 1;
  int deadline = 10;
  int compile = 3;
};

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::string join(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

const std::vector<std::string>& interesting_values() {
  static const std::vector<std::string> values = {
      "0", "-1", "1", "4294967296", "9223372036854775807", "(-9223372036854775807 - 1) / -1",
      "(-9223372036854775807 - 1) % -1", "nan", "-.inf", ".inf", "1e308", "-0.0", "\"\"", "[]", "{}",
      "~", "null", "true", "M_PI", "errno", "HALF_MAX", "TG / 0", "ceil_div(n, 0)", "n * n * n * n * n * n",
      "\"a\\nb\"", "*anchor", "&anchor x", "!!binary AAAA", std::string(2000, '('), std::string(5000, '-') + "1",
      std::string(20000, 'x'), "[" + std::string(300, '[') + std::string(300, ']') + "]"};
  return values;
}

// One random edit of `text`.
std::string mutate(const std::string& text, std::mt19937& rng) {
  auto lines = lines_of(text);
  if (lines.empty()) return text;
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  size_t at = pick(lines.size());
  std::string& line = lines[at];
  switch (pick(9)) {
    case 0: lines.erase(lines.begin() + long(at)); break;
    case 1: lines.insert(lines.begin() + long(at), line); break;  // a duplicate key, mostly
    case 2: {  // a value replaced
      size_t colon = line.find(": ");
      const auto& v = interesting_values();
      if (colon != std::string::npos) line = line.substr(0, colon + 2) + v[pick(v.size())];
      break;
    }
    case 3: {  // a number inside a flow list or map replaced
      size_t digit = line.find_first_of("0123456789");
      const auto& v = interesting_values();
      if (digit != std::string::npos) line.replace(digit, line.find_first_not_of("0123456789.", digit) - digit, v[pick(v.size())]);
      break;
    }
    case 4: line.insert(0, std::string(pick(4) + 1, ' ')); break;  // indentation broken
    case 5: std::swap(line, lines[pick(lines.size())]); break;
    case 6: if (!line.empty()) line[pick(line.size())] = "{}[],:#&*!|>'\"%@`\t"[pick(19)]; break;
    case 7: {  // CR-only or CRLF line endings
      std::string out;
      for (const auto& l : lines) out += l + (pick(2) ? "\r" : "\r\n");
      return out;
    }
    default: if (line.find(':') != std::string::npos) line += " # " + std::string(pick(3), ':'); break;
  }
  return join(lines);
}

// What the child found wrong, or "" when the mutant was handled well; `accepted` says whether
// the front end took it.
std::string judge(const fs::path& path, bool compile, bool& accepted) {
  support::Diagnostics diags;
  auto kernel = spec::load_spec(path.string(), path.string(), diags);
  int lines = int(lines_of(read(path)).size()) + 1;
  for (const auto& d : diags.all()) {
    bool located = d.loc.file == path.string() && d.loc.line >= 1 && d.loc.line <= lines && d.loc.column >= 1;
    bool file_level = d.kind == support::ErrorKind::io || d.kind == support::ErrorKind::file_too_large;
    if (!located && !file_level) return "unlocated error: " + diags.format(d);
    if (d.message.empty()) return "error without a message at line " + std::to_string(d.loc.line);
  }
  if (!kernel) return "";
  accepted = true;
  if (diags.has_errors()) return "a kernel came back with errors:\n" + diags.format_all();
  auto files = driver::generate({*kernel});
  if (files.files().empty()) return "an accepted spec generated nothing";
  if (compile) {
    support::Diagnostics parsed;
    bool ok = check_msl::check_emitted_msl(*kernel, parsed);
    if (!check_msl::check_emitted_reference(*kernel, parsed) || !ok) {
      for (const auto& d : parsed.all()) {
        if (d.loc.line < 1) return "an emitted-code error without a spec line: " + parsed.format(d);
      }
    }
  }
  return "";
}

// Runs `judge` in a child with a deadline; returns the verdict (crash and hang included).
std::string run_one(const fs::path& path, int& accepted, const Options& o) {
  const bool compile = accepted < o.compile;
  int fds[2];
  if (::pipe(fds) != 0) return "pipe failed";
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    ::alarm(static_cast<unsigned>(o.deadline));
    bool took = false;
    std::string verdict = judge(path, compile, took);
    verdict.insert(0, took ? "+" : "-");
    (void)!::write(fds[1], verdict.data(), verdict.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string verdict;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) verdict.append(buffer, size_t(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) return fmt::format("hang (over {} s)", o.deadline);
  if (WIFSIGNALED(status)) return fmt::format("crash ({})", strsignal(WTERMSIG(status)));
  if (verdict.empty()) return "the child died without a verdict";
  accepted += verdict[0] == '+';
  return verdict.substr(1);
}

Options parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::atoi(argv[++i]) : 0; };
    if (a == "--iterations") o.iterations = next();
    else if (a == "--seed") o.seed = static_cast<unsigned>(next());
    else if (a == "--deadline") o.deadline = next();
    else if (a == "--compile") o.compile = next();
    else o.seeds.push_back(a);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse_args(argc, argv);
  if (o.seeds.empty() || o.iterations < 1 || o.deadline < 1) {
    fmt::print(stderr, "usage: spec_fuzz [--iterations N] [--seed S] [--deadline SECONDS] [--compile N] SPEC...\n");
    return 2;
  }
  std::mt19937 rng(o.seed);
  fs::path dir = fs::temp_directory_path() / fmt::format("mtlgen-fuzz-{}", ::getpid());
  fs::create_directories(dir);
  int failures = 0, accepted = 0;
  for (int i = 0; i < o.iterations; ++i) {
    const std::string& seed = o.seeds[size_t(i) % o.seeds.size()];
    std::string text = read(seed);
    for (int edits = 1 + int(rng() % 3); edits > 0; --edits) text = mutate(text, rng);
    fs::path mutant = dir / fmt::format("mutant_{}.yaml", i);
    std::ofstream(mutant, std::ios::binary) << text;
    std::string verdict = run_one(mutant, accepted, o);
    if (verdict.empty()) {
      fs::remove(mutant);
      continue;
    }
    ++failures;
    fmt::print(stderr, "{} (from {}): {}\n", mutant.string(), seed, verdict);
  }
  fmt::print("spec_fuzz: {} mutants, {} accepted, {} failures{}\n", o.iterations, accepted, failures,
             failures ? fmt::format(" (kept in {})", dir.string()) : "");
  if (!failures) fs::remove_all(dir);
  return failures ? 1 : 0;
}
