// The loop rewrite's sync points (which calls end a region) and the flattened body they split:
// its items by region, and the values one region declares and a later one reads.
#include <fmt/format.h>

#include <cstring>

#include "msl/msl_loop_rewrite.h"

namespace mtlgen::msl::loop_form {

// ---- SyncPoints ----

bool SyncPoints::contains_sync(CXCursor c) {
  if (clang_getCursorKind(c) == CXCursor_CallExpr && is_sync_call(callee_name(c))) return true;
  bool found = false;
  visit(c, [&](CXCursor x) {
    if (clang_getCursorKind(x) == CXCursor_CallExpr && is_sync_call(callee_name(x))) {
      found = true;
      return CXChildVisit_Break;
    }
    return CXChildVisit_Recurse;
  });
  return found;
}

// A function defined in another user file than the kernel's counts when it (or the builtin it
// may overload) syncs: the flattener then refuses it (it inlines only the kernel's file's helpers),
// where a region loop would otherwise run its sync point mid-region.
bool SyncPoints::is_sync_call(const std::string& name) {
  if (src_.defined_here(name)) return helper_syncs(name, false);
  if (src_.defined_elsewhere(name)) return is_sync_builtin(name) || helper_syncs(name, true);
  return is_sync_builtin(name);
}

bool SyncPoints::helper_syncs(const std::string& name, bool elsewhere) {
  const auto key = std::make_pair(name, elsewhere);
  auto memo = syncs_.find(key);
  if (memo != syncs_.end()) return memo->second;
  syncs_[key] = true;  // a recursive helper counts as one: it is refused where called
  bool any = false;
  for (CXCursor def : elsewhere ? src_.definitions_elsewhere(name) : src_.definitions(name)) any = any || contains_sync(def);
  return syncs_[key] = any;
}

// ---- FlatBody ----

int FlatBody::add_var(const std::string& name, const std::string& type, bool constant, int line) {
  vars.push_back({name, type, region, constant, false, line});
  var_by_name[name] = int(vars.size()) - 1;
  return int(vars.size()) - 1;
}

// Identifier tokens of `text` (rendered, so helpers' names are already the loop form's).
void FlatBody::note_uses(const std::string& text, int in_region) {
  for_each_identifier(text, [&](const std::string& word, bool member) {
    auto v = var_by_name.find(word);
    if (!member && v != var_by_name.end() && vars[v->second].region != in_region && !vars[v->second].constant)
      vars[v->second].replicated = true;
    return true;
  });
}

void FlatBody::control(int line, std::string text, bool simd) {
  ++region;
  if (simd) note_uses(text, region);  // read with the lane's values the block binds
  Item item = make_item(Item::control, line, std::move(text));
  item.region = region;
  item.simd = simd;
  items.push_back(std::move(item));
}

// A pointer kept for a later region may point at a local (`p = &x`, `p = arr`): such locals live
// in the frames too, so that they outlive their region.
void FlatBody::keep_pointed_to() {
  for (Var& v : vars)
    if (v.type.find('[') != std::string::npos && !v.constant) v.replicated = v.addressed = true;
  for (const Item& item : items) {
    const std::string& t = item.text;
    for (size_t i = t.find('&'); i != std::string::npos; i = t.find('&', i + 1)) {
      if ((i + 1 < t.size() && t[i + 1] == '&') || (i > 0 && t[i - 1] == '&')) continue;
      size_t p = i;  // unary `&` follows an operator or `(`: not `a & b`, not `T& x`
      while (p > 0 && t[p - 1] == ' ') --p;
      if (p > 0 && (std::isalnum(static_cast<unsigned char>(t[p - 1])) || std::strchr("_)]>", t[p - 1]))) continue;
      size_t b = i + 1;
      while (b < t.size() && t[b] == ' ') ++b;
      size_t e = b;
      while (e < t.size() && (std::isalnum(static_cast<unsigned char>(t[e])) || t[e] == '_')) ++e;
      auto v = var_by_name.find(t.substr(b, e - b));
      if (v != var_by_name.end() && !vars[v->second].constant) vars[v->second].replicated = vars[v->second].addressed = true;
    }
  }
}

void FlatBody::refuse_unkept() const {
  for (int m : multi)
    if (vars[m].replicated) throw Refusal{"a declaration of several variables used after a barrier", vars[m].line};
  for (const Var& v : vars)
    if (v.replicated && (v.type.empty() || v.type.find("auto") != std::string::npos || v.type.find('&') != std::string::npos ||
                         v.type.find("dependent") != std::string::npos))
      throw Refusal{fmt::format("`{}` is used after a barrier but its type `{}` cannot be kept per thread", v.name, v.type), v.line};
}

}  // namespace mtlgen::msl::loop_form
