// The CPU loops of the optimizer rules of kernels/common/optim_functors.h (RMSprop, Adagrad, Adamax,
// NAdam, RAdam, Adadelta, Rprop, ASGD): one pass over every listed tensor's elements, split across the threads.
#include <cstdint>
#include <vector>

#include "kernels/common/dispatch.h"
#include "kernels/common/optim.h"
#include "kernels/cpu/joined_ranges.h"

namespace colony::kernels::cpu {
namespace {

// Elements [begin, end) of one tensor. The scalars are a local copy and the arrays restrict, so
// that a store to p or a state does not make every element reload them. A state the step does
// not use is nullptr and its element a dummy.
template <typename Rule, typename T>
void rule_range(T* __restrict__ p, const T* __restrict__ g, T* __restrict__ s0, T* __restrict__ s1,
                T* __restrict__ s2, int64_t begin, int64_t end, const typename Rule::Params k) {
  for (int64_t i = begin; i < end; ++i) {
    T u0{}, u1{}, u2{};
    Rule::update(p[i], g[i], s0 ? s0[i] : u0, s1 ? s1[i] : u1, s2 ? s2[i] : u2, k);
  }
}

template <typename Rule>
void rule_step_multi(DType dtype, const OptimTensorLists& l, const typename Rule::Params& k) {
  COLONY_DISPATCH_FLOATING(dtype, "optimizer_step", [&] {
    auto state = [&](int s, size_t t) {
      return l.states[s].empty() ? nullptr : static_cast<scalar_t*>(l.states[s][t]);
    };
    for_each_joined_range(l.sizes, kOptimStepGrain, [&](size_t t, int64_t begin, int64_t end) {
      rule_range<Rule>(static_cast<scalar_t*>(l.params[t]), static_cast<const scalar_t*>(l.grads[t]), state(0, t),
                       state(1, t), state(2, t), begin, end, k);
    });
  });
}

}  // namespace
}  // namespace colony::kernels::cpu

namespace colony::kernels {

void RmspropStepMulti::cpu(DType dtype, const OptimTensorLists& lists, const RmspropParams& k) {
  cpu::rule_step_multi<RmspropRule>(dtype, lists, k);
}
void AdagradStepMulti::cpu(DType dtype, const OptimTensorLists& lists, const AdagradParams& k) {
  cpu::rule_step_multi<AdagradRule>(dtype, lists, k);
}
void AdamaxStepMulti::cpu(DType dtype, const OptimTensorLists& lists, const AdamaxParams& k) {
  cpu::rule_step_multi<AdamaxRule>(dtype, lists, k);
}
void NadamStepMulti::cpu(DType dtype, const OptimTensorLists& lists, const NadamParams& k) {
  cpu::rule_step_multi<NadamRule>(dtype, lists, k);
}
void RadamStepMulti::cpu(DType dtype, const OptimTensorLists& lists, const RadamParams& k) {
  cpu::rule_step_multi<RadamRule>(dtype, lists, k);
}
void AdadeltaStepMulti::cpu(DType dtype, const OptimTensorLists& lists, const AdadeltaParams& k) {
  cpu::rule_step_multi<AdadeltaRule>(dtype, lists, k);
}
void RpropStepMulti::cpu(DType dtype, const OptimTensorLists& lists, const RpropParams& k) {
  cpu::rule_step_multi<RpropRule>(dtype, lists, k);
}
void AsgdStepMulti::cpu(DType dtype, const OptimTensorLists& lists, const AsgdParams& k) {
  cpu::rule_step_multi<AsgdRule>(dtype, lists, k);
}

}  // namespace colony::kernels
