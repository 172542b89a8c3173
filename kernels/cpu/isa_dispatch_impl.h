// isa_dispatch.h's definitions, for baseline code only: a family's dispatch .cc and its emulated
// copies' .cc, never a per-ISA copy's translation unit (isa_dispatch.h says why).
#pragma once

#include <atomic>
#include <initializer_list>
#include <vector>

#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/isa_dispatch.h"

namespace colony::kernels::cpu {

// One copy of a family and the level (cpu_isa.h) a CPU must reach to run it. `fns` returns the
// copy's table and is called only where that level is reached: a table function built with
// -march=x86-64-v4 is not called on an AVX2 CPU.
template <typename Fns>
struct IsaCopy {
  CpuIsa needs;
  const Fns& (*fns)();
};

namespace isa_dispatch_detail {

// A family's override: null while none is in force, &none_fns<Fns> for ScopedFns(nullptr).
template <typename Fns>
std::atomic<const Fns*>& override_slot() {
  static std::atomic<const Fns*> slot{nullptr};
  return slot;
}

template <typename Fns>
inline const Fns none_fns{};

}  // namespace isa_dispatch_detail

template <typename Fns>
ScopedFns<Fns>::ScopedFns(const Fns* fns) {
  const Fns* slot_value = fns != nullptr ? fns : &isa_dispatch_detail::none_fns<Fns>;
  saved_ = isa_dispatch_detail::override_slot<Fns>().exchange(slot_value);
}

template <typename Fns>
ScopedFns<Fns>::~ScopedFns() {
  isa_dispatch_detail::override_slot<Fns>().store(saved_);
}

// The override's copy while a ScopedFns<Fns> is alive (null for ScopedFns(nullptr)), else
// choose()'s, which is not called then.
template <typename Fns, typename Choose>
const Fns* overridden_or(const Choose& choose) {
  const Fns* o = isa_dispatch_detail::override_slot<Fns>().load(std::memory_order_acquire);
  if (o == nullptr) return choose();
  return o == &isa_dispatch_detail::none_fns<Fns> ? nullptr : o;
}

// The last of `copies` (listed from the least demanding up) whose level `level` reaches; null
// where it reaches none.
template <typename Fns>
const Fns* copy_for(CpuIsa level, std::initializer_list<IsaCopy<Fns>> copies) {
  const IsaCopy<Fns>* best = nullptr;
  for (const IsaCopy<Fns>& c : copies) {
    if (level >= c.needs) best = &c;
  }
  return best != nullptr ? &best->fns() : nullptr;
}

// A family's active copy: the override's, else copy_for(active_cpu_isa(), copies), chosen on the
// first call (COLONY_CPU_ISA caps it). `copies` is read on that call only: one call site per
// family, its active_*_fns().
template <typename Fns>
const Fns* active_copy(std::initializer_list<IsaCopy<Fns>> copies) {
  return overridden_or<Fns>([&copies] {
    static const Fns* const best = copy_for(active_cpu_isa(), copies);
    return best;
  });
}

// Tests: the copies whose level detected_cpu_isa() reaches (COLONY_CPU_ISA does not cap what a
// test may call directly), in the order listed.
template <typename Fns>
std::vector<const Fns*> runnable_copies(std::initializer_list<IsaCopy<Fns>> copies) {
  std::vector<const Fns*> runnable;
  for (const IsaCopy<Fns>& c : copies) {
    if (detected_cpu_isa() >= c.needs) runnable.push_back(&c.fns());
  }
  return runnable;
}

}  // namespace colony::kernels::cpu
