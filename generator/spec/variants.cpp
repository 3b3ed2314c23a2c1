#include "spec/variants.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "spec/body_threadgroup.h"
#include "spec/spec_validator.h"
#include "support/text.h"

namespace mtlgen::spec {

using support::Diagnostics;
using support::ErrorKind;
using support::SourceLoc;

namespace {

class VariantBuilder {
 public:
  VariantBuilder(ir::Kernel& k, Diagnostics& d) : k_(k), diags_(d) {}

  std::vector<std::map<std::string, ir::ScalarType>> type_combinations() const {
    if (!k_.type_tuples.empty()) return k_.type_tuples;
    std::vector<std::map<std::string, ir::ScalarType>> out = {{}};
    for (const auto& p : k_.type_params) {
      std::vector<std::map<std::string, ir::ScalarType>> next;
      for (const auto& partial : out) {
        for (auto t : p.types) {
          auto m = partial;
          m[p.name] = t;
          next.push_back(std::move(m));
        }
      }
      out = std::move(next);
    }
    return out;
  }

  std::vector<std::map<std::string, int64_t>> tune_points() const {
    std::vector<std::map<std::string, int64_t>> out = {{}};
    for (const auto& t : k_.tunables) {
      std::vector<std::map<std::string, int64_t>> next;
      for (const auto& partial : out) {
        for (auto v : t.values) {
          auto m = partial;
          m[t.name] = v;
          next.push_back(std::move(m));
        }
      }
      out = std::move(next);
    }
    return out;
  }

  std::string entry_point(const std::map<std::string, ir::ScalarType>& types,
                          const std::map<std::string, int64_t>& tune) const {
    std::string name = k_.name;
    for (const auto& p : k_.type_params) name += "_" + std::string(ir::info(types.at(p.name)).suffix);
    for (const auto& t : k_.tunables) name += fmt::format("_{}{}", support::lower_ascii(t.name), tune.at(t.name));
    return name;
  }

  expr::Env env_for(const std::map<std::string, ir::ScalarType>& types, const std::map<std::string, int64_t>& tune) const {
    expr::Env env;
    for (const auto& [name, value] : tune) env.symbols[name] = value;
    for (const auto& [name, type] : types) env.type_sizes[name] = ir::info(type).size;
    ir::add_concrete_type_sizes(env.type_sizes);
    return env;
  }

  // Types x tune points, counted before either list is built: 8 type parameters x 10 types
  // would be 10^8 maps. Saturates instead of overflowing.
  uint64_t variant_count() const {
    uint64_t count = 1;
    auto times = [&](size_t n) {
      if (__builtin_mul_overflow(count, std::max<uint64_t>(n, 1), &count)) count = UINT64_MAX;
    };
    for (const auto& p : k_.type_params) times(p.types.size());
    for (const auto& t : k_.tunables) times(t.values.size());
    return count;
  }

  void run() {
    if (uint64_t count = variant_count(); count > kMaxVariants) {
      std::string how_many = count == UINT64_MAX ? "more than 2^64" : std::to_string(count);
      diags_.error(ErrorKind::bad_value, k_.name_loc,
                   fmt::format("too many variants: {}; at most {} are allowed", how_many, kMaxVariants),
                   "trim the type lists or the tunable values (variants = type combinations x tune points)");
      return;
    }
    auto types = type_combinations();
    auto points = tune_points();
    std::set<std::string> reported, entry_points;
    for (const auto& tmap : types) {
      for (const auto& point : points) {
        auto v = make_variant(tmap, point, reported);
        if (!v) continue;
        if (!entry_points.insert(v->entry_point).second) {
          diags_.error(ErrorKind::duplicate_name, k_.type_params.empty() ? k_.name_loc : k_.type_params[0].loc,
                       fmt::format("two variants would share the entry point `{}`", v->entry_point),
                       "list each type once per parameter; uint8 and bytes share the suffix u8");
          return;
        }
        k_.variants.push_back(std::move(*v));
      }
    }
    k_.msl_version = "3.0";
    for (const auto& v : k_.variants) {
      for (const auto& [name, t] : v.types) k_.msl_version = std::max(k_.msl_version, ir::min_msl_version(t));
    }
    auto raise = [&](const ir::TypeRef& t) {
      if (t.concrete) k_.msl_version = std::max(k_.msl_version, ir::min_msl_version(*t.concrete));
    };
    for (const auto& a : k_.threadgroup_arrays) raise(a.type);
    for (const auto& b : k_.buffers) raise(b.type);
    for (const auto& f : k_.function_constants) raise(ir::TypeRef{f.type, "", f.loc});
  }

  std::optional<ir::Variant> make_variant(const std::map<std::string, ir::ScalarType>& types,
                                          const std::map<std::string, int64_t>& point, std::set<std::string>& reported) {
    ir::Variant v;
    v.types = types;
    v.tunables = point;
    v.entry_point = entry_point(types, point);
    v.is_default_tuning = std::all_of(k_.tunables.begin(), k_.tunables.end(),
                                      [&](const ir::Tunable& t) { return point.at(t.name) == t.default_value; });
    expr::Env env = env_for(types, point);
    SourceLoc at = k_.dispatch.loc;  // the expression being evaluated
    try {
      v.threads_per_threadgroup = 1;
      if (k_.dispatch.threads_from_dims) {  // the declared maximum; the shape is the problem's
        at = k_.dispatch.max_threads->loc;
        v.threads_per_threadgroup = expr::evaluate(*k_.dispatch.max_threads, env);
      }
      for (const auto& e : k_.dispatch.threads_from_dims ? std::vector<expr::Expr>{} : k_.dispatch.threads_per_threadgroup) {
        at = e.loc;
        v.threadgroup_shape.push_back(expr::evaluate(e, env));
        // [192, 192153584101141163] once wrapped to 64 threads; saturated, it fails the size check below.
        if (__builtin_mul_overflow(v.threads_per_threadgroup, v.threadgroup_shape.back(), &v.threads_per_threadgroup)) {
          v.threads_per_threadgroup = INT64_MAX;
        }
      }
      int64_t total = 0;
      for (const auto& a : k_.threadgroup_arrays) {
        int64_t count = evaluate_count(a, env, v);
        if (count <= 0) return std::nullopt;
        int64_t bytes = 0;
        // Saturated rather than wrapped: any byte count this large fails the 32 KiB check.
        if (__builtin_mul_overflow(count, int64_t{ir::info(a.type.resolve(types)).size}, &bytes) || bytes > INT64_MAX / 2) {
          bytes = INT64_MAX / 2;
        }
        v.threadgroup_array_bytes.push_back(bytes);
        total = std::min(total + round_up_16(bytes), INT64_MAX / 2);
      }
      for (const auto& b : k_.body_threadgroup_variables) {
        int64_t bytes = body_variable_bytes(b, env, v);
        if (bytes <= 0) return std::nullopt;
        v.body_threadgroup_bytes.push_back(bytes);
        total = std::min(total + round_up_16(bytes), INT64_MAX / 2);
      }
      if (!k_.is_family()) check_variant_limits(v, total, reported);
    } catch (const expr::EvalError& err) {
      diags_.error(ErrorKind::bad_expression, at, fmt::format("at {}: {}", v.entry_point, err.message),
                   "threads_per_threadgroup must evaluate at every tune point and type: check its divisors and sizes");
      return std::nullopt;
    }
    return v;
  }

  // A threadgroup array's element count at one variant; <= 0 after reporting a problem.
  int64_t evaluate_count(const ir::ThreadgroupArray& a, const expr::Env& env, const ir::Variant& v) {
    try {
      int64_t count = expr::evaluate(a.count, env);
      if (count > 0) return count;
      diags_.error(ErrorKind::threadgroup_memory, a.count.loc,
                   fmt::format("threadgroup array `{}` has {} elements at {}", a.name, count, tune_text(v)),
                   "a threadgroup array needs at least one element at every tune point");
    } catch (const expr::EvalError& err) {
      diags_.error(ErrorKind::bad_expression, a.count.loc, fmt::format("at {}: {}", v.entry_point, err.message),
                   "make the count valid for every tunable value");
    }
    return 0;
  }

  // A body threadgroup variable's bytes at one variant (saturated like the arrays'); <= 0 after
  // reporting an extent below one.
  int64_t body_variable_bytes(const ir::BodyThreadgroupVariable& b, expr::Env env, const ir::Variant& v) {
    env.symbols["SIMD_SIZE"] = kSimdSize;
    int64_t bytes = int64_t{ir::info(b.type.resolve(v.types)).size} * b.lanes;
    for (const auto& e : b.extents) {
      int64_t extent = 0;
      try {
        extent = expr::evaluate(e, env);
      } catch (const expr::EvalError& err) {
        diags_.error(ErrorKind::bad_expression, e.loc, fmt::format("at {}: {}", v.entry_point, err.message),
                     "make the extent valid for every tunable value");
        return 0;
      }
      if (extent <= 0) {
        diags_.error(ErrorKind::threadgroup_memory, e.loc,
                     fmt::format("threadgroup variable `{}` has an extent of {} at {}", b.name, extent, tune_text(v)),
                     "every extent of a threadgroup array must be at least 1 at every tune point");
        return 0;
      }
      if (__builtin_mul_overflow(bytes, extent, &bytes) || bytes > INT64_MAX / 2) bytes = INT64_MAX / 2;
    }
    return bytes;
  }

  std::string tune_text(const ir::Variant& v) const {
    std::vector<std::string> parts;
    for (const auto& [name, value] : v.tunables) parts.push_back(fmt::format("{}={}", name, value));
    return parts.empty() ? "the fixed configuration" : fmt::format("{}", fmt::join(parts, ", "));
  }

  // Where the variant's largest threadgroup array or body variable is declared: what to shrink first.
  SourceLoc largest_threadgroup_memory(const ir::Variant& v) const {
    SourceLoc at = k_.dispatch.loc;
    int64_t largest = -1;
    for (size_t i = 0; i < k_.threadgroup_arrays.size(); ++i)
      if (v.threadgroup_array_bytes[i] > largest) largest = v.threadgroup_array_bytes[i], at = k_.threadgroup_arrays[i].loc;
    for (size_t i = 0; i < k_.body_threadgroup_variables.size(); ++i)
      if (v.body_threadgroup_bytes[i] > largest) largest = v.body_threadgroup_bytes[i], at = k_.body_threadgroup_variables[i].loc;
    return at;
  }

  void check_variant_limits(const ir::Variant& v, int64_t tg_bytes, std::set<std::string>& reported) {
    std::string where = tune_text(v);
    SourceLoc loc = k_.dispatch.threads_per_threadgroup.empty() ? k_.dispatch.loc
                                                                : k_.dispatch.threads_per_threadgroup[0].loc;
    int64_t n = v.threads_per_threadgroup;
    if (k_.dispatch.threads_from_dims) {  // any size up to the maximum: partial simdgroups are the kernel's business
      loc = k_.dispatch.max_threads->loc;
      if ((n > kMaxThreadsPerThreadgroup || n <= 0) && reported.insert("max:" + std::to_string(n)).second) {
        diags_.error(ErrorKind::threadgroup_size, loc, fmt::format("max_threads_per_threadgroup is {} at {}", n, where),
                     "threadgroups hold 1 to 1024 threads");
      }
    } else if ((n % 32 != 0 || n > kMaxThreadsPerThreadgroup || n <= 0) && reported.insert("tg:" + where).second) {
      diags_.error(ErrorKind::threadgroup_size, loc,
                   fmt::format("{} threads per threadgroup at {}", n == INT64_MAX ? "more than 2^63" : std::to_string(n), where),
                   "threadgroups must be a multiple of 32 threads (one simdgroup) and at most 1024");
    }
    if (tg_bytes > kMaxThreadgroupBytes && reported.insert("mem:" + where).second) {
      diags_.error(ErrorKind::threadgroup_memory, largest_threadgroup_memory(v),
                   fmt::format("{} bytes of threadgroup memory at {} (variant `{}`)", tg_bytes, where, v.entry_point),
                   fmt::format("Apple GPUs offer {} bytes per threadgroup (the `threadgroup_memory:` arrays and the "
                               "body's threadgroup variables, each rounded up to 16 bytes); shrink them or the tune space",
                               kMaxThreadgroupBytes));
    }
  }


 private:
  ir::Kernel& k_;
  Diagnostics& diags_;
};

}  // namespace

void build_variants(ir::Kernel& kernel, Diagnostics& diags) { VariantBuilder(kernel, diags).run(); }

}  // namespace mtlgen::spec
