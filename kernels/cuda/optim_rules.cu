// The CUDA kernels of the optimizer rules of kernels/common/optim_functors.h (RMSprop, Adagrad,
// Adamax, NAdam, RAdam, Adadelta, Rprop, ASGD): multi-tensor launches (multi_tensor.cuh) of up to 24 tensors,
// the parameter, its gradient and up to kMaxOptimStates states each.
#include <cuda_runtime.h>

#include <vector>

#include "kernels/common/dispatch.h"
#include "kernels/common/optim.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/multi_tensor.cuh"

namespace colony::kernels::cuda {
namespace {

constexpr int kRuleLists = 2 + kMaxOptimStates;  // parameter, gradient, states

static_assert(sizeof(TensorChunks<kRuleLists>) + sizeof(RadamParams) < 4096, "kernel parameters are limited to 4 KB");

// A state the step does not use is a null list and its element a dummy.
template <typename Rule, typename T>
__global__ void __launch_bounds__(kMultiTensorThreads)
    multi_rule_kernel(TensorChunks<kRuleLists> c, typename Rule::Params k) {
  int64_t begin, end;
  const int t = block_range(c, begin, end);
  T* p = static_cast<T*>(c.ptr[0][t]);
  const T* g = static_cast<const T*>(c.ptr[1][t]);
  T* s0 = static_cast<T*>(c.ptr[2][t]);
  T* s1 = static_cast<T*>(c.ptr[3][t]);
  T* s2 = static_cast<T*>(c.ptr[4][t]);
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    T u0{}, u1{}, u2{};
    Rule::update(p[i], g[i], s0 ? s0[i] : u0, s1 ? s1[i] : u1, s2 ? s2[i] : u2, k);
  }
}

template <typename Rule>
void rule_step_multi(DType dtype, const OptimTensorLists& l, const typename Rule::Params& k, void* stream,
                     const char* op) {
  std::vector<const void*> lists[kRuleLists] = {std::vector<const void*>(l.params.begin(), l.params.end()),
                                                l.grads};
  for (int s = 0; s < kMaxOptimStates; ++s) lists[2 + s].assign(l.states[s].begin(), l.states[s].end());
  COLONY_DISPATCH_FLOATING(dtype, op, [&] {
    for_each_launch<kRuleLists>(lists, l.sizes, op, [&](const TensorChunks<kRuleLists>& c, unsigned blocks) {
      multi_rule_kernel<Rule, scalar_t><<<blocks, kMultiTensorThreads, 0, as_stream(stream)>>>(c, k);
    });
  });
}

}  // namespace
}  // namespace colony::kernels::cuda

namespace colony::kernels {

void RmspropStepMulti::cuda(DType dtype, const OptimTensorLists& lists, const RmspropParams& k, void* stream) {
  cuda::rule_step_multi<RmspropRule>(dtype, lists, k, stream, "rmsprop_step");
}
void AdagradStepMulti::cuda(DType dtype, const OptimTensorLists& lists, const AdagradParams& k, void* stream) {
  cuda::rule_step_multi<AdagradRule>(dtype, lists, k, stream, "adagrad_step");
}
void AdamaxStepMulti::cuda(DType dtype, const OptimTensorLists& lists, const AdamaxParams& k, void* stream) {
  cuda::rule_step_multi<AdamaxRule>(dtype, lists, k, stream, "adamax_step");
}
void NadamStepMulti::cuda(DType dtype, const OptimTensorLists& lists, const NadamParams& k, void* stream) {
  cuda::rule_step_multi<NadamRule>(dtype, lists, k, stream, "nadam_step");
}
void RadamStepMulti::cuda(DType dtype, const OptimTensorLists& lists, const RadamParams& k, void* stream) {
  cuda::rule_step_multi<RadamRule>(dtype, lists, k, stream, "radam_step");
}
void AdadeltaStepMulti::cuda(DType dtype, const OptimTensorLists& lists, const AdadeltaParams& k, void* stream) {
  cuda::rule_step_multi<AdadeltaRule>(dtype, lists, k, stream, "adadelta_step");
}
void RpropStepMulti::cuda(DType dtype, const OptimTensorLists& lists, const RpropParams& k, void* stream) {
  cuda::rule_step_multi<RpropRule>(dtype, lists, k, stream, "rprop_step");
}
void AsgdStepMulti::cuda(DType dtype, const OptimTensorLists& lists, const AsgdParams& k, void* stream) {
  cuda::rule_step_multi<AsgdRule>(dtype, lists, k, stream, "asgd_step");
}

}  // namespace colony::kernels
