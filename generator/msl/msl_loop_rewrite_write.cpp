// The loop rewrite writes the flattened body as `mtlsim_loops_<kernel>`: per-thread frames for
// values a later region needs, and one mtlsim::loops::segment call per stretch between barriers.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "msl/msl_loop_rewrite.h"

namespace mtlgen::msl::loop_form {

std::string RegionWriter::write_function(CXCursor fn, const EntryPoint& entry) const {
  std::string out = fmt::format("\n// The loop form of `{}` (mtlgen's MSL front end, for the simulator).\n", spelling(fn));
  out += signature(fn);
  out += "{\n";
  find_recomputed(entry);
  for (const KernelParam& p : entry.params)  // the regions read each thread's builtins instead
    if (!p.name.empty()) out += fmt::format("(void){};\n", p.name);
  out += "[[maybe_unused]] const ::mtlsim::loops::Builtins mtlsim_bi(mtlsim_run);\n";
  for (const std::string& h : body_.hoisted) out += h;
  for (int i = 0; i < int(body_.vars.size()); ++i) {
    const Var& v = body_.vars[size_t(i)];
    if (v.replicated && !recomputed_.count(i))
      out += fmt::format("auto* mtlsim_f_{} = ::mtlsim::loops::frame<{}>(mtlsim_run, {});\n", v.name, v.type,
                         v.initialised ? "false" : "true");
  }
  out += write_segments(entry);
  out += "}\n";
  // The launchers compile their loop-form entry points only where this is defined. Not for a form
  // with simdgroup blocks in the race-instrumented module (--races exact): there every access to
  // the values kept in frames is instrumented, where a fiber's locals are not, and such a form ran
  // slower than fibers (its lane-order runs are the only ones that would take it).
  const bool blocks = std::any_of(body_.items.begin(), body_.items.end(), [](const Item& i) { return i.simd; });
  if (blocks) out += "#if !defined(__SANITIZE_THREAD__)\n";
  out += fmt::format("#define MTLSIM_LOOPS_{} 1\n", spelling(fn));
  if (blocks) out += "#endif\n";
  return out;
}

// `template <...> void mtlsim_loops_k(<the kernel's parameters>, const LoopRun& mtlsim_run)`.
std::string RegionWriter::signature(CXCursor fn) const {
  const UserFile& f = src_.file();
  auto [b, e] = src_.range_of(fn, false);
  size_t name_tok = f.token_at(src_.ctx().pos(fn).offset);
  std::string head;
  size_t i = f.token_at(b);
  if (f.tokens[i].text == "template") {
    size_t j = i + 1;
    int depth = 0;
    for (; j < f.tokens.size(); ++j) {
      if (f.tokens[j].text == "<") ++depth;
      if (f.tokens[j].text == ">") --depth;
      if (f.tokens[j].text == ">>") depth -= 2;
      if (depth <= 0) break;
    }
    head = src_.render(f.tokens[i].begin, f.tokens[j].end, Scope{}) + "\n";
  }
  size_t open = name_tok + 1, close = open;
  int depth = 0;
  for (; close < f.tokens.size(); ++close) {
    if (f.tokens[close].text == "(") ++depth;
    if (f.tokens[close].text == ")" && --depth == 0) break;
  }
  std::string params = src_.render(f.tokens[open].end, f.tokens[close].begin, Scope{});
  params = strip_attributes(params);
  std::string sep = params.find_first_not_of(" \t\n") == std::string::npos ? "" : ", ";
  return fmt::format("{}void mtlsim_loops_{}({}{}const ::mtlsim::detail::LoopRun& mtlsim_run)\n", head, spelling(fn), params,
                     sep);
}

std::string RegionWriter::strip_attributes(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.compare(i, 2, "[[") == 0) {
      size_t end = s.find("]]", i);
      if (end != std::string::npos) {
        i = end + 1;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

// The regions between threadgroup barriers and uniform loop or branch headers: one call of the
// lane-order driver (mtlsim::loops::segment) per stretch, with a function of the thread per
// region; the headers and closing braces between the stretches, run once per threadgroup.
std::string RegionWriter::write_segments(const EntryPoint& entry) const {
  std::set<int> ends = {body_.region};  // the last region of each stretch
  for (const Item& item : body_.items) {
    if (item.kind == Item::sync && item.barrier) ends.insert(item.region);
    if (item.kind == Item::control && !item.simd) ends.insert(item.region - 1);
  }
  std::string out;
  int first = 0;
  for (int last : ends) {
    for (const Item& item : body_.items)
      if (item.kind == Item::control && !item.simd && item.region == first) out += src_.line_directive(item.line) + item.text + "\n";
    if (last < first) continue;
    if (first == last && empty_region(first)) {  // between two headers or closing braces
      first = last + 1;
      continue;
    }
    out += "::mtlsim::loops::segment(mtlsim_run,\n[&](uint32_t mtlsim_t) {\n" + write_region(first, entry) + "}";
    out += write_chain(first + 1, last, entry) + ");\n";
    first = last + 1;
  }
  return out;
}

std::string RegionWriter::write_chain(int from, int to, const EntryPoint& entry) const {
  std::string out;
  for (int r = from; r <= to; ++r) {
    const Item* c = simd_control(r);
    if (c && c->text.front() != '}') {
      out += ",\n" + write_block(r, entry, r);
      if (r > to) break;
    }
    out += ",\n[&](uint32_t mtlsim_t) {\n" + write_region(r, entry) + "}";  // empty too: it passes the lead on
  }
  return out;
}

// `::mtlsim::loops::block(...)`: the header read with the values of the lane that arrived last (the
// same in its simdgroup), the regions of each stretch between headers in one simd_run.
std::string RegionWriter::write_block(int r, const EntryPoint& entry, int& next) const {
  std::string out = "::mtlsim::loops::block([&](const ::mtlsim::detail::SimdGroup& mtlsim_sg, uint32_t mtlsim_lead) -> uint32_t {\n";
  out += "const uint32_t mtlsim_t = mtlsim_lead;\n::mtlsim::detail::tls_lane = &mtlsim_run.lanes[mtlsim_t];\n";
  out += bindings(r, entry);
  std::string regions;
  auto flush = [&] {
    if (!regions.empty()) out += "mtlsim_lead = ::mtlsim::loops::simd_run(mtlsim_run, mtlsim_sg, mtlsim_lead" + regions + ");\n";
    regions.clear();
  };
  int depth = 0;
  bool dead = false;  // between a switch's cases: no statement there runs
  for (int k = r; k <= body_.region; ++k) {
    if (const Item* c = simd_control(k)) {
      flush();
      out += src_.line_directive(c->line) + c->text + "\n";
      depth += int(std::count(c->text.begin(), c->text.end(), '{')) - int(std::count(c->text.begin(), c->text.end(), '}'));
      if (depth == 0) {
        next = k;
        return out + "return mtlsim_lead;\n})";
      }
      dead = c->text.rfind("switch (", 0) == 0 || c->text == "} break;";
    }
    if (dead && empty_region(k)) continue;
    if (empty_region(k)) regions += ",\n::mtlsim::loops::Pass{}";  // passes the lead on without a loop over the lanes
    else regions += ",\n[&](uint32_t mtlsim_t) {\n" + write_region(k, entry) + "}";
  }
  throw Refusal{"a simdgroup block without its closing brace", simd_control(r)->line};
}

const Item* RegionWriter::simd_control(int r) const {
  for (const Item& item : body_.items)
    if (item.kind == Item::control && item.simd && item.region == r) return &item;
  return nullptr;
}

bool RegionWriter::empty_region(int r) const {
  for (const Item& item : body_.items) {
    if (item.region == r && item.kind != Item::control) return false;
    if (item.region == r - 1 && item.kind == Item::sync && item.target.kind != Target::none) return false;
  }
  return true;
}

std::string RegionWriter::bindings(int r, const EntryPoint& entry, const std::set<int>* promoted) const {
  std::string out;
  for (const KernelParam& p : entry.params) {
    if (p.kind != ParamKind::builtin || p.name.empty()) continue;
    if (!p.builtin) throw Refusal{fmt::format("the builtin `{}`", p.builtin_attribute), p.loc.line};
    out += fmt::format("[[maybe_unused]] const {0} {1} = ::mtlsim::as_builtin<{0}>(::mtlsim::loops::builtin::{2}(mtlsim_bi, mtlsim_t));\n",
                       p.builtin_type, p.name, ir::info(*p.builtin).attribute);
  }
  for (int i = 0; i < int(body_.vars.size()); ++i) {
    const Var& v = body_.vars[size_t(i)];
    if (!v.replicated || v.region >= r) continue;
    if (auto c = recomputed_.find(i); c != recomputed_.end()) out += "[[maybe_unused]] " + c->second + "\n";
    else if (promoted && promoted->count(i)) out += fmt::format("auto {0} = mtlsim_f_{0}[mtlsim_t];\n", v.name);
    else if (!promoted || v.addressed) out += fmt::format("[[maybe_unused]] auto& {0} = mtlsim_f_{0}[mtlsim_t];\n", v.name);
  }
  return out;
}

// A region's kept values live in its locals (register promotion): a value bound to its frame slot
// is written through a reference that g++ must assume a store to device memory may alias, so a
// running sum went to memory on every iteration. Each is read from its slot at the region's start
// and stored back at its end: a region ends at its last statement (a thread returns only in the
// last region of the kernel, after which no region reads its values, so that one stores none) or in
// a report that abandons the threadgroup.
std::string RegionWriter::write_region(int r, const EntryPoint& entry) const {
  std::string text;
  for (const Item& item : body_.items) {
    if (item.kind == Item::sync && item.region == r - 1) text += sync_result(item, false);
    if (item.region == r && item.kind != Item::control) text += write_item(item, false);
  }
  const std::set<int> promoted = promoted_in(r, text);
  if (promoted.empty()) return bindings(r, entry) + text;
  std::string out = bindings(r, entry, &promoted);
  for (const Item& item : body_.items) {
    if (item.kind == Item::sync && item.region == r - 1) out += sync_result(item, true);
    if (item.region == r && item.kind != Item::control) out += write_item(item, true);
  }
  if (r == body_.region) return out;  // the last region (after every loop's closing brace): none reads them later
  for (int i : promoted) {
    const Var& v = body_.vars[size_t(i)];
    if ((v.region == r || may_change(text, v)) && live_after(r, i)) out += fmt::format("mtlsim_f_{0}[mtlsim_t] = {0};\n", v.name);
  }
  return out;
}

// Whether `text` may change `v` (declared before it): a `const` scalar never changes; else some
// occurrence of its name (not a member's) may change it unless what follows only reads it (a
// binary operator, `?`, `]`, `;` but after `=` or `:`, which may bind a reference to it, and a
// pointer's `[` or `->`, which reach what it points at). So an assignment, `++`, a member or element
// of a vector or struct, or a whole argument (a reference parameter) all store it back.
bool RegionWriter::may_change(const std::string& text, const Var& v) {
  if (v.type.rfind("const ", 0) == 0 && v.type.find_first_of("*&[") == std::string::npos) return false;
  const bool pointer = v.type.find_last_not_of(' ') != std::string::npos && v.type[v.type.find_last_not_of(' ')] == '*';
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = text.find(v.name); at != std::string::npos; at = text.find(v.name, at + 1)) {
    const size_t end = at + v.name.size();
    if ((at > 0 && ident(text[at - 1])) || (end < text.size() && ident(text[end]))) continue;
    size_t b = at;
    while (b > 0 && text[b - 1] == ' ') --b;
    const char before = b > 0 ? text[b - 1] : '\n';
    if (before == '.' || (before == '>' && b > 1 && text[b - 2] == '-')) continue;  // a member of something else
    if (before == '+' || before == '-' || before == '&') return true;               // ++x, --x, &x (or a binary operand: conservative)
    size_t e = end;
    while (e < text.size() && text[e] == ' ') ++e;
    const std::string next = text.substr(e, 3);
    auto starts = [&](const char* s) { return next.rfind(s, 0) == 0; };
    if (starts("<<=") || starts(">>=")) return true;
    if (starts("==") || starts("!=") || starts("<=") || starts(">=") || starts("&&") || starts("||") || starts("<<") ||
        starts(">>") || starts("->"))
      continue;  // `->`: a pointer's target (a member of a struct value would be `.`)
    if (next.size() >= 2 && next[1] == '=') return true;  // +=, -=, *=, /=, %=, &=, |=, ^=
    if (starts("++") || starts("--")) return true;
    const char c = next.empty() ? ';' : next[0];
    if (c == '[' && pointer) continue;
    if (std::strchr("+-*/%<>&|^?]", c) != nullptr && c != '\0') continue;
    if (c == ';' && before != '=' && before != ':') continue;
    return true;  // =, `.`, an element, `)`, `,`, `:`, `}`, or anything else
  }
  return false;
}

std::set<int> RegionWriter::promoted_in(int r, const std::string& text) const {
  std::set<int> named;
  bool macro = false;
  for_each_identifier(text, [&](const std::string& word, bool member) {
    auto v = body_.var_by_name.find(word);
    if (!member && v != body_.var_by_name.end()) named.insert(v->second);
    else if (src_.ctx().definition_of_macro(word)) macro = true;
    return !macro;
  });
  if (macro) return {};
  std::set<int> promoted;
  for (int i : named) {
    const Var& v = body_.vars[size_t(i)];
    if (v.replicated && !v.addressed && v.region <= r && !recomputed_.count(i)) promoted.insert(i);
  }
  return promoted;
}

std::string RegionWriter::declare(const Item& item, const std::string& type, const std::string& init, bool promoted) const {
  const Var& v = body_.vars[item.target.var];
  if (!v.replicated || (promoted && !v.addressed)) return fmt::format("{}{} = {};\n", type, v.name, init);
  return fmt::format("{}mtlsim_d_{} = {}; [[maybe_unused]] auto& {} = ::mtlsim::loops::keep(mtlsim_f_{}[mtlsim_t], mtlsim_d_{});\n", type,
                     v.name, init, v.name, v.name, v.name);
}

std::string RegionWriter::sync_result(const Item& item, bool promoted) const {
  std::string value = fmt::format("::mtlsim::loops::result<decltype({})>()", item.text);
  std::string out = src_.line_directive(item.line);
  if (item.target.kind == Target::assign) return out + fmt::format("{} = {};\n", item.target.text, value);
  if (item.target.kind == Target::declare) return out + declare(item, item.target.text, value, promoted);
  return "";
}

// `T x;` (one scalar or vector, no initializer) becomes `T x = ::mtlsim::loops::private_fill<...>();`.
std::string RegionWriter::with_private_fill(const Item& item) {
  if (item.has_init || item.name_end <= item.name_at) return item.text;
  const size_t semicolon = item.text.find_first_not_of(" \t", item.name_end);
  if (semicolon == std::string::npos || item.text[semicolon] != ';') return item.text;  // an array, or more
  std::string text = item.text;
  const std::string name = item.text.substr(item.name_at, item.name_end - item.name_at);
  text.insert(item.name_end, fmt::format(" = ::mtlsim::loops::private_fill<decltype({})>()", name));
  return text;
}

std::string RegionWriter::write_item(const Item& item, bool promoted) const {
  std::string out = src_.line_directive(item.line);
  switch (item.kind) {
    case Item::sync: return out + item.guard + item.text + ";\n";
    case Item::result:
      if (item.target.kind == Target::assign) return out + fmt::format("{} = ({});\n", item.target.text, item.text);
      if (item.target.kind == Target::declare) return out + declare(item, item.target.text, "(" + item.text + ")", promoted);
      return out + fmt::format("(void)({});\n", item.text);
    case Item::code:
    case Item::control: break;
  }
  if (item.var < 0) return out + item.text + "\n";
  const Var& v = body_.vars[item.var];
  if (!v.replicated) return out + with_private_fill(item) + "\n";
  if (recomputed_.count(item.var)) return out + "[[maybe_unused]] " + item.text + "\n";
  if (!item.has_init) {  // its slot holds the fill a fresh local has
    if (promoted && !v.addressed) return out + fmt::format("auto {0} = mtlsim_f_{0}[mtlsim_t];\n", v.name);
    return out + fmt::format("[[maybe_unused]] auto& {0} = mtlsim_f_{0}[mtlsim_t];\n", v.name);
  }
  if (promoted && !v.addressed) return out + item.text + "\n";
  std::string text = item.text;
  text.replace(item.name_at, item.name_end - item.name_at, "mtlsim_d_" + v.name);
  return out + text + fmt::format(" [[maybe_unused]] auto& {0} = ::mtlsim::loops::keep(mtlsim_f_{0}[mtlsim_t], mtlsim_d_{0});\n", v.name);
}

// tg_sum(acc, partial, lane, sg) inlined binds `mtlsim_h1_partial = (partial)` and so on: values
// every region can compute from its own builtins and the kernel's parameters, where a frame cost a
// store per thread and a load per region. A copy qualifies when its initializer is one name (in
// parentheses or not) of a builtin, a kernel parameter passed by value (not a reference, whose
// read is a load the access counters see) or an earlier copy, and no statement changes it or
// that name.
void RegionWriter::find_recomputed(const EntryPoint& entry) const {
  recomputed_.clear();
  std::map<const Item*, std::string> copies;  // one-name initializers, by declaration
  for (const Item& item : body_.items) {
    if (item.kind != Item::code || item.var < 0 || !item.has_init) continue;
    const Var& v = body_.vars[size_t(item.var)];
    if (!v.replicated || v.addressed || v.constant || v.type.find('&') != std::string::npos || body_.var_by_name.at(v.name) != item.var)
      continue;
    const size_t b = item.text.find_first_not_of(' ', item.name_end), e = item.text.find_last_not_of(" ;\n");
    if (b == std::string::npos || e == std::string::npos || e <= b || item.text[b] != '=' || item.text[b + 1] == '=') continue;
    std::string init = item.text.substr(b + 1, e - b);
    auto trim = [&] { init.erase(0, init.find_first_not_of(' ')), init.erase(init.find_last_not_of(' ') + 1); };
    for (trim(); init.size() > 2 && init.front() == '(' && init.back() == ')'; trim()) init = init.substr(1, init.size() - 2);
    if (!init.empty() && !std::isdigit(static_cast<unsigned char>(init[0])) &&
        std::all_of(init.begin(), init.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }))
      copies[&item] = init;
  }
  std::string all;  // every statement and header but the copies (which change neither side), to ask what changes a name
  for (const Item& item : body_.items)
    if (!copies.count(&item)) all += item.text + (item.target.kind == Target::assign ? " " + item.target.text + " = 0;" : "") + "\n";
  std::set<std::string> sources;
  for (const KernelParam& p : entry.params)
    if (!p.name.empty() && (p.kind == ParamKind::builtin || !p.is_reference) && !may_change(all, Var{p.name, p.type}))
      sources.insert(p.name);
  for (const Item& item : body_.items) {  // in order: a copy of an earlier copy follows it
    auto c = copies.find(&item);
    if (c == copies.end() || !sources.count(c->second) || may_change(all, body_.vars[size_t(item.var)])) continue;
    if (auto local = body_.var_by_name.find(c->second); local != body_.var_by_name.end() && !recomputed_.count(local->second))
      continue;  // a local that hides the parameter
    recomputed_[item.var] = item.text;
    sources.insert(body_.vars[size_t(item.var)].name);
  }
}

bool RegionWriter::live_after(int r, int i) const {
  const Var& v = body_.vars[size_t(i)];
  enum { none, reads, assigns } use = none;
  auto names = [&](const std::string& text) {  // v, or a macro of the user's files (which may name it unseen)
    bool found = false;
    for_each_identifier(text, [&](const std::string& word, bool member) {
      found = (!member && word == v.name) || src_.ctx().definition_of_macro(word);
      return !found;
    });
    return found;
  };
  auto whole = [&](const std::string& lhs, const std::string& rhs) {  // `v = rhs`, rhs not reading v
    return lhs == v.name && !names(rhs) ? assigns : reads;
  };
  for (int k = r + 1; k <= body_.region && use == none; ++k) {
    for (const Item& item : body_.items) {
      if (use != none) break;
      if (item.kind == Item::control && item.region == k) return true;  // a loop may come back, a branch skip
      if (item.kind == Item::sync && item.region == k - 1 && item.target.kind != Target::none) {
        if (item.target.kind == Target::assign) use = item.target.text == v.name ? assigns : names(item.target.text) ? reads : none;
        continue;
      }
      if (item.region != k || item.kind == Item::control || !names(item.text + " " + item.target.text)) continue;
      if (item.kind == Item::result && item.target.kind == Target::assign) use = whole(item.target.text, item.text);
      else if (item.kind == Item::code && item.var < 0 && item.text.rfind(v.name, 0) == 0) {
        const size_t eq = item.text.find_first_not_of(' ', v.name.size());
        use = eq != std::string::npos && item.text[eq] == '=' && item.text.compare(eq, 2, "==") != 0 ? whole(v.name, item.text.substr(eq + 1)) : reads;
      } else {
        use = reads;
      }
    }
  }
  return use == reads;
}

}  // namespace mtlgen::msl::loop_form
