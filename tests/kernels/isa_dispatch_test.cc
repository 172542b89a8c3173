// kernels/cpu/isa_dispatch.h and isa_dispatch_impl.h: the choice of a family's copy by level, the
// copies a test may run, and the override, on a family of the test's own (the real families'
// tests check their own tables: small_gemm_test, amx_gemm_test, conv_pixels_test, ...).
#include "kernels/cpu/isa_dispatch.h"

#include <gtest/gtest.h>

#include <vector>

#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/isa_dispatch_impl.h"

namespace colony::kernels::cpu {
namespace {

struct ToyFns {
  const char* isa;
};

int table_calls[3] = {0, 0, 0};

const ToyFns& base_fns() {
  static const ToyFns fns{"base"};
  ++table_calls[0];
  return fns;
}
const ToyFns& v4_fns() {
  static const ToyFns fns{"v4"};
  ++table_calls[1];
  return fns;
}
const ToyFns& amx_fns() {
  static const ToyFns fns{"amx"};
  ++table_calls[2];
  return fns;
}

// Listed from the least demanding up, as the families list theirs.
const std::initializer_list<IsaCopy<ToyFns>> kCopies = {
    {CpuIsa::Avx2, &base_fns}, {CpuIsa::Avx512, &v4_fns}, {CpuIsa::AmxBf16, &amx_fns}};

TEST(IsaDispatch, CopyForTakesTheMostDemandingCopyTheLevelReaches) {
  EXPECT_EQ(copy_for(CpuIsa::Avx2, kCopies), &base_fns());
  EXPECT_EQ(copy_for(CpuIsa::Avx512, kCopies), &v4_fns());
  EXPECT_EQ(copy_for(CpuIsa::Avx512Bf16, kCopies), &v4_fns());
  EXPECT_EQ(copy_for(CpuIsa::AmxBf16, kCopies), &amx_fns());
  // A family with no baseline copy (the bfloat16 tiles, AMX) has none below its level.
  EXPECT_EQ(copy_for<ToyFns>(CpuIsa::Avx512, {{CpuIsa::AmxBf16, &amx_fns}}), nullptr);
  EXPECT_EQ(copy_for<ToyFns>(CpuIsa::AmxBf16, {}), nullptr);
}

TEST(IsaDispatch, OnlyTheChosenCopysTableFunctionIsCalled) {
  // A copy's table function is built for its ISA: the choice must not call the others'.
  const int before[3] = {table_calls[0], table_calls[1], table_calls[2]};
  EXPECT_STREQ(copy_for(CpuIsa::Avx512, kCopies)->isa, "v4");
  EXPECT_EQ(table_calls[0], before[0]);
  EXPECT_EQ(table_calls[1], before[1] + 1);
  EXPECT_EQ(table_calls[2], before[2]);
  EXPECT_EQ(copy_for<ToyFns>(CpuIsa::Avx2, {{CpuIsa::AmxBf16, &amx_fns}}), nullptr);
  EXPECT_EQ(table_calls[2], before[2]);
}

TEST(IsaDispatch, RunnableCopiesAreThoseTheDetectedLevelReachesInOrder) {
  std::vector<const ToyFns*> want = {&base_fns()};
  if (detected_cpu_isa() >= CpuIsa::Avx512) want.push_back(&v4_fns());
  if (detected_cpu_isa() >= CpuIsa::AmxBf16) want.push_back(&amx_fns());
  EXPECT_EQ(runnable_copies(kCopies), want);
}

struct OverriddenFns {
  const char* isa;
};
const OverriddenFns kChosen{"chosen"}, kFirst{"first"}, kSecond{"second"};

TEST(IsaDispatch, ScopedFnsOverridesNestsAndRestores) {
  int chose = 0;
  auto choose = [&chose] {
    ++chose;
    return &kChosen;
  };
  EXPECT_EQ(overridden_or<OverriddenFns>(choose), &kChosen);
  EXPECT_EQ(chose, 1);
  {
    ScopedFns<OverriddenFns> first(&kFirst);
    EXPECT_EQ(overridden_or<OverriddenFns>(choose), &kFirst);
    {
      ScopedFns<OverriddenFns> none(nullptr);
      EXPECT_EQ(overridden_or<OverriddenFns>(choose), nullptr);
      {
        ScopedFns<OverriddenFns> second(&kSecond);
        EXPECT_EQ(overridden_or<OverriddenFns>(choose), &kSecond);
      }
      EXPECT_EQ(overridden_or<OverriddenFns>(choose), nullptr);
    }
    EXPECT_EQ(overridden_or<OverriddenFns>(choose), &kFirst);
    EXPECT_EQ(chose, 1);  // not asked while an override is in force
  }
  EXPECT_EQ(overridden_or<OverriddenFns>(choose), &kChosen);
  EXPECT_EQ(chose, 2);
  // Another family's override is its own.
  ScopedFns<ToyFns> other(nullptr);
  EXPECT_EQ(overridden_or<OverriddenFns>(choose), &kChosen);
}

TEST(IsaDispatch, ActiveCopyFollowsTheActiveLevelUnlessOverridden) {
  const ToyFns* want = copy_for(active_cpu_isa(), kCopies);
  EXPECT_EQ(active_copy(kCopies), want);
  {
    ScopedFns<ToyFns> use(&amx_fns());
    EXPECT_EQ(active_copy(kCopies), &amx_fns());
    ScopedFns<ToyFns> none(nullptr);
    EXPECT_EQ(active_copy(kCopies), nullptr);
  }
  // Chosen once per process: the call site's table is read on the first call only.
  const int calls = table_calls[0] + table_calls[1] + table_calls[2];
  EXPECT_EQ(active_copy(kCopies), want);
  EXPECT_EQ(table_calls[0] + table_calls[1] + table_calls[2], calls);
}

}  // namespace
}  // namespace colony::kernels::cpu
