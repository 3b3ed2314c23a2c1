// A kernel family predicted dispatch by dispatch: the member's variant the family's glue serves at
// the dims the dispatch binds (the resolution verify's family runner uses), through the same model
// as a lone kernel. The dispatches run back to back in one command buffer, each waiting for the one
// before, so the family's time is their sum, each with its launch (docs/report.md "Kernel families").
#include "advisor/advisor.h"

namespace mtlgen::advisor {

namespace {

DispatchPrediction predict_dispatch(const ir::Family& f, size_t index, const ir::Variant& family_variant,
                                    const ir::TestCase& test, const MemberCounters& counters) {
  const ir::FamilyDispatch& d = f.dispatches[index];
  DispatchPrediction p;
  p.dispatch = index + 1;
  p.member = &f.kernel_of(d);
  p.dims = f.member_dims(d, test.dims, family_variant);
  p.variant = &f.member_variant(d, p.dims, family_variant);
  p.workload = workload(*p.member, *p.variant, p.dims);
  auto counted = counters.find(p.member->name);
  p.counted = counted != counters.end() && counted->second;
  if (p.counted) apply_counters(p.workload, *counted->second);
  for (const auto& chip : chips()) p.per_chip.push_back(predict(p.workload, chip));
  return p;
}

}  // namespace

MemberCounters member_counters(const std::vector<KernelAdvice>& advice) {
  MemberCounters out;
  for (const auto& a : advice) {
    if (a.counters) out[a.kernel->name] = &*a.counters;
  }
  return out;
}

FamilyPoint predict_family(const ir::Kernel& family, const ir::Variant& variant, const ir::TestCase& test,
                           const MemberCounters& counters) {
  const ir::Family& f = *family.family;
  FamilyPoint point;
  point.variant = &variant;
  point.test = &test;
  point.total_us.assign(chips().size(), 0);
  for (size_t i = 0; i < f.dispatches.size(); ++i) {
    point.dispatches.push_back(predict_dispatch(f, i, variant, test, counters));
    for (size_t c = 0; c < chips().size(); ++c) point.total_us[c] += point.dispatches.back().per_chip[c].time_us;
  }
  return point;
}

}  // namespace mtlgen::advisor
