// A mutation fuzzer for the spec front end. It mutates spec files line by line and value by value
// (values that broke it before: INT64_MIN / -1, deep nesting, huge names, CR-only line endings,
// duplicate keys, NaN, 2^32) and checks, for every mutant, in a child process with a deadline:
//   * no crash and no hang (over --deadline seconds of CPU, or 6 times that waiting, libclang pass
//     included), and the front end
//     (load, validate, generate) done within --slow seconds of CPU time;
//   * every error is located inside the file (line 1..lines, column >= 1), has a message and a
//     hint;
//   * a mutant whose only edit empties a value (`key:`) and that is rejected has an error on
//     that line;
//   * alias mutants (a value anchored `&fz_anchor` on one line and used as `*fz_anchor` on a later
//     one) report the same errors, on the same lines, as the same spec with the value written out
//     at the use, and no column past the alias;
//   * an accepted spec generates every file in memory, and for the first --compile accepted
//     mutants its emitted MSL and reference go through libclang (MSL front end, C++ reference):
//     errors are located at spec lines, and none lies in the code mtlgen wraps around a body and
//     a reference left as the seed had them.
// CTest runs it briefly; `build/tests/fuzz/spec_fuzz --iterations 3000 --compile 100 specs/*.yaml`
// runs it long (a few minutes; the libclang pass costs about 1.5 s per accepted mutant).
#include <fmt/format.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
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
  double slow = 3;
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

// A value that an anchor can name and that can be written out on another line as it is: a plain
// or quoted scalar, or a flow collection closed on its line; no comment, anchor, alias or tag.
bool single_line_value(const std::string& v) {
  if (v.empty() || std::string("|>&*!#%@`'\"-?,").find(v[0]) != std::string::npos) {
    if (v.empty() || (v[0] != '"' && v[0] != '\'')) return false;
  }
  if (v.find(" #") != std::string::npos || v.find('&') != std::string::npos) return false;
  if (v[0] == '"' || v[0] == '\'') return v.size() >= 2 && v.back() == v[0] && v.find(v[0], 1) == v.size() - 1;
  if (v[0] != '[' && v[0] != '{') return v.find_first_of("[]{},:\"'*") == std::string::npos;
  int depth = 0;
  char quote = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    char c = v[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '*' && i > 0 && std::string("[{, ").find(v[i - 1]) != std::string::npos && i + 1 < v.size() &&
               (std::isalpha(static_cast<unsigned char>(v[i + 1])) || v[i + 1] == '_')) {
      return false;  // an alias inside the collection
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      if (--depth == 0 && i + 1 != v.size()) return false;
      if (depth < 0) return false;
    }
  }
  return depth == 0 && !quote;
}

// `[indent][- ]key: value` or `[indent]- value` outside block scalars, split after its `: ` or `- `.
struct ValueLine {
  size_t index;
  std::string head;
  std::string value;
};

std::vector<ValueLine> value_lines(const std::vector<std::string>& lines) {
  std::vector<ValueLine> out;
  size_t block_indent = std::string::npos;  // inside a block scalar: lines indented deeper
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    size_t indent = l.find_first_not_of(' ');
    if (indent == std::string::npos) continue;
    if (block_indent != std::string::npos && indent > block_indent) continue;
    block_indent = std::string::npos;
    std::string rest = l.substr(indent);
    if (rest[0] == '#') continue;
    size_t trimmed = rest.find_last_not_of(" ");
    if (trimmed != std::string::npos && (rest.back() == '|' || rest.back() == '>' || rest.rfind("|-") + 2 == rest.size())) {
      block_indent = indent;
      continue;
    }
    size_t head = rest.rfind("- ", 0) == 0 ? 2 : 0;
    size_t colon = rest.find(": ", head);
    bool key = colon != std::string::npos && colon > head &&
               std::all_of(rest.begin() + long(head), rest.begin() + long(colon),
                           [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
    size_t value_at = key ? colon + 2 : head;
    if (value_at == 0) continue;
    std::string value = rest.substr(value_at);
    if (!single_line_value(value)) continue;
    out.push_back({i, l.substr(0, indent + value_at), value});
  }
  return out;
}

// An alias mutant and its twin with the value written out: `&fz_anchor` on one line's value, the
// value of a later line replaced by `*fz_anchor` (by the value itself in the twin). Lines keep
// their numbers. Nullopt when the text has fewer than two such lines.
struct AliasPair {
  std::string aliased;
  std::string written_out;
  int use_line;    // 1-based
  int use_column;  // of the `*`
};

std::optional<AliasPair> alias_pair(const std::string& text, std::mt19937& rng) {
  auto lines = lines_of(text);
  auto candidates = value_lines(lines);
  if (candidates.size() < 2) return std::nullopt;
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  size_t a = pick(candidates.size() - 1);
  size_t b = a + 1 + pick(candidates.size() - a - 1);
  const ValueLine& anchor = candidates[a];
  const ValueLine& use = candidates[b];
  auto twin = lines;
  twin[use.index] = use.head + anchor.value;
  lines[anchor.index] = anchor.head + "&fz_anchor " + anchor.value;
  lines[use.index] = use.head + "*fz_anchor";
  return AliasPair{join(lines), join(twin), int(use.index) + 1, int(use.head.size()) + 1};
}

// `key: value` turned into `key:` (a line whose value is on the line and whose next line is not
// indented deeper, so that nothing else becomes the value). Returns the 1-based line, or 0.
int empty_a_value(std::string& text, std::mt19937& rng) {
  auto lines = lines_of(text);
  std::vector<ValueLine> candidates;
  for (const auto& v : value_lines(lines)) {
    size_t indent = lines[v.index].find_first_not_of(' ');
    size_t next = v.index + 1 < lines.size() ? lines[v.index + 1].find_first_not_of(' ') : 0;
    if (v.head.size() >= 2 && v.head.compare(v.head.size() - 2, 2, ": ") == 0 && (next == std::string::npos || next <= indent)) {
      candidates.push_back(v);
    }
  }
  if (candidates.empty()) return 0;
  const ValueLine& v = candidates[std::uniform_int_distribution<size_t>(0, candidates.size() - 1)(rng)];
  lines[v.index] = v.head.substr(0, v.head.size() - 1);
  text = join(lines);
  return int(v.index) + 1;
}

std::string check_located(const support::Diagnostics& diags, const fs::path& path) {
  int lines = int(lines_of(read(path)).size()) + 1;
  for (const auto& d : diags.all()) {
    bool located = d.loc.file == path.string() && d.loc.line >= 1 && d.loc.line <= lines && d.loc.column >= 1;
    bool file_level = d.kind == support::ErrorKind::io || d.kind == support::ErrorKind::file_too_large;
    if (!located && !file_level) return "unlocated error: " + diags.format(d);
    if (d.message.empty()) return "error without a message at line " + std::to_string(d.loc.line);
    if (d.hint.empty()) return "error without a hint: " + diags.format(d);
  }
  return "";
}

// The libclang pass over an accepted kernel's emitted MSL and reference.
std::string check_compiles(const ir::Kernel& kernel, const std::optional<ir::Kernel>& seed) {
  support::Diagnostics parsed;
  bool ok = check_msl::check_emitted_msl(kernel, parsed);
  if (check_msl::check_emitted_reference(kernel, parsed) && ok) return "";
  bool code_as_seed = seed && seed->body.text == kernel.body.text && seed->reference.text == kernel.reference.text;
  for (const auto& d : parsed.all()) {
    if (d.loc.line < 1) return "an emitted-code error without a spec line: " + parsed.format(d);
    if (code_as_seed && d.message.find("in the code mtlgen wraps around") != std::string::npos) {
      return "generated code around the seed's own body or reference does not compile: " + parsed.format(d);
    }
  }
  return "";
}

// What the child found wrong, or "" when the mutant was handled well; `accepted` says whether
// the front end took it.
// CPU time, not wall time: a loaded machine (CTest in parallel) must not make a mutant "slow".
std::string check_time(std::clock_t start, double slow) {
  double seconds = double(std::clock() - start) / CLOCKS_PER_SEC;
  return seconds > slow ? fmt::format("slow: the front end took {:.1f} s of CPU (limit {} s)", seconds, slow) : "";
}

// A rejected mutant whose only edit emptied a value on `emptied_line` has an error on that line.
std::string judge(const fs::path& path, const fs::path& seed_path, bool compile, int emptied_line, double slow,
                  bool& accepted) {
  std::clock_t start = std::clock();
  support::Diagnostics diags;
  auto kernel = spec::load_spec(path.string(), path.string(), diags);
  if (std::string bad = check_located(diags, path); !bad.empty()) return bad;
  if (!kernel && emptied_line > 0 &&
      std::none_of(diags.all().begin(), diags.all().end(), [&](const auto& d) { return d.loc.line == emptied_line; })) {
    return fmt::format("the value emptied on line {} is reported elsewhere:\n{}", emptied_line, diags.format_all());
  }
  if (!kernel) return check_time(start, slow);
  accepted = true;
  if (diags.has_errors()) return "a kernel came back with errors:\n" + diags.format_all();
  auto files = driver::generate({*kernel});
  if (files.files().empty()) return "an accepted spec generated nothing";
  if (std::string bad = check_time(start, slow); !bad.empty()) return bad;
  if (!compile) return "";
  support::Diagnostics seed_diags;
  return check_compiles(*kernel, spec::load_spec(seed_path.string(), seed_path.string(), seed_diags));
}

// (kind, line, message) of each error, sorted: what an alias mutant and its twin must share.
std::vector<std::string> error_lines(const support::Diagnostics& diags) {
  std::vector<std::string> out;
  for (const auto& d : diags.all()) {
    out.push_back(fmt::format("{}:{}: {}", d.loc.line, support::to_string(d.kind), d.message));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// An alias mutant against its twin: the same verdict and the same errors at the same lines;
// errors on the alias's line never point past the `*`.
std::string judge_alias(const fs::path& path, const fs::path& twin, const AliasPair& pair, bool& accepted) {
  support::Diagnostics diags, twin_diags;
  auto kernel = spec::load_spec(path.string(), path.string(), diags);
  auto twin_kernel = spec::load_spec(twin.string(), twin.string(), twin_diags);
  accepted = kernel.has_value();
  if (std::string bad = check_located(diags, path); !bad.empty()) return bad;
  for (const auto& d : diags.all()) {
    if (d.loc.line == pair.use_line && d.loc.column > pair.use_column) {
      return fmt::format("an error on the alias's line {} lies past the alias (column {}): {}", pair.use_line,
                         pair.use_column, diags.format(d));
    }
  }
  auto errors = error_lines(diags), twin_errors = error_lines(twin_diags);
  if (kernel.has_value() == twin_kernel.has_value() && errors == twin_errors) return "";
  return fmt::format("the alias changed the errors (use at line {}; twin kept beside the mutant):\n  with the "
                     "alias:\n    {}\n  written out:\n    {}",
                     pair.use_line, fmt::join(errors, "\n    "), fmt::join(twin_errors, "\n    "));
}

constexpr int kWaitFactor = 6;  // wall-clock deadline = CPU deadline * this

// Runs `judge` in a child with a deadline; returns the verdict (crash and hang included).
// `judge` sets its argument when the front end accepted the mutant.
std::string run_one(const std::function<std::string(bool&)>& judge, int& accepted, const Options& o) {
  int fds[2];
  if (::pipe(fds) != 0) return "pipe failed";
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    // A hang spins (CPU time) or waits (wall time): CPU time is the limit, so that a loaded
    // machine does not make a slow mutant a hang; the wall clock only catches a wait.
    rlimit cpu{rlim_t(o.deadline), rlim_t(o.deadline) + 1};
    ::setrlimit(RLIMIT_CPU, &cpu);
    ::alarm(static_cast<unsigned>(o.deadline) * kWaitFactor);
    bool took = false;
    std::string verdict = judge(took);
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
  if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGXCPU || WTERMSIG(status) == SIGKILL)) {
    return fmt::format("hang (over {} s of CPU)", o.deadline);
  }
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
    return fmt::format("hang (waited over {} s)", o.deadline * kWaitFactor);
  }
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
    else if (a == "--slow") o.slow = next();
    else if (a == "--compile") o.compile = next();
    else o.seeds.push_back(a);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse_args(argc, argv);
  if (o.seeds.empty() || o.iterations < 1 || o.deadline < 1 || o.slow <= 0) {
    fmt::print(stderr, "usage: spec_fuzz [--iterations N] [--seed S] [--deadline SECONDS] [--slow SECONDS] [--compile N] SPEC...\n");
    return 2;
  }
  std::mt19937 rng(o.seed);
  fs::path dir = fs::temp_directory_path() / fmt::format("mtlgen-fuzz-{}", ::getpid());
  fs::create_directories(dir);
  // The seeds beside the mutants: a family's `{spec: file.yaml}` resolves to an unmutated copy,
  // and a `reference_include` to the file of the seed's folder.
  for (const auto& seed : o.seeds) {
    fs::copy_file(seed, dir / fs::path(seed).filename(), fs::copy_options::overwrite_existing);
    for (const auto& entry : fs::directory_iterator(fs::path(seed).parent_path().empty() ? "." : fs::path(seed).parent_path()))
      if (entry.is_regular_file() && entry.path().extension() == ".inc")
        fs::copy_file(entry.path(), dir / entry.path().filename(), fs::copy_options::overwrite_existing);
  }
  int failures = 0, accepted = 0, aliased = 0;
  for (int i = 0; i < o.iterations; ++i) {
    const std::string& seed = o.seeds[size_t(i) % o.seeds.size()];
    std::string text = read(seed);
    // One mutant in four uses an alias, after at most one other edit; one in eight only empties
    // a value.
    bool alias = i % 4 == 3;
    int emptied_line = i % 8 == 1 ? empty_a_value(text, rng) : 0;
    if (!emptied_line) {
      for (int edits = alias ? int(rng() % 2) : 1 + int(rng() % 3); edits > 0; --edits) text = mutate(text, rng);
    }
    std::optional<AliasPair> pair = alias ? alias_pair(text, rng) : std::nullopt;
    fs::path mutant = dir / fmt::format("mutant_{}.yaml", i);
    fs::path twin = dir / fmt::format("mutant_{}_written_out.yaml", i);
    std::ofstream(mutant, std::ios::binary) << (pair ? pair->aliased : text);
    if (pair) std::ofstream(twin, std::ios::binary) << pair->written_out;
    aliased += pair.has_value();
    const bool compile = accepted < o.compile;
    std::string verdict = run_one(
        [&](bool& took) {
          return pair ? judge_alias(mutant, twin, *pair, took) : judge(mutant, seed, compile, emptied_line, o.slow, took);
        },
        accepted, o);
    if (verdict.empty()) {
      fs::remove(mutant);
      fs::remove(twin);
      continue;
    }
    ++failures;
    fmt::print(stderr, "{} (from {}): {}\n", mutant.string(), seed, verdict);
  }
  fmt::print("spec_fuzz: {} mutants ({} with an alias), {} accepted, {} failures{}\n", o.iterations, aliased, accepted, failures,
             failures ? fmt::format(" (kept in {})", dir.string()) : "");
  if (!failures) fs::remove_all(dir);
  return failures ? 1 : 0;
}
