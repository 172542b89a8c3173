#include "distributed/ddp/comm_hooks.h"

#include "tensor/grad_mode.h"
#include "ops/raw_ops.h"

namespace colony::dist::comm_hooks {
namespace {

// The half copy stays on the bucket's device: NCCL reduces it there, and Gloo stages CUDA tensors
// through pinned host memory itself (gloo/cuda_staging.h), so no hook needs a host copy of its own.
CommHook compress_to(DType wire) {
  return [wire](ProcessGroup& group, Tensor& bucket) {
    NoGradGuard no_grad;
    Tensor scaled = raw::binary(raw::BinaryOp::Div, bucket, static_cast<double>(group.size()));
    Tensor half = raw::to(scaled, bucket.device(), wire);
    if (!half.is_contiguous()) half = raw::contiguous(half);
    PendingReduction r;
    r.work = group.allreduce(half, ReduceOp::kSum);
    Tensor target = bucket;
    // Queued after the Work's wait(): on a GPU the copy waits for the all-reduce on the stream.
    r.finish = [half, target]() mutable { raw::copy_(target, half); };
    return r;
  };
}

}  // namespace

CommHook allreduce_avg() {
  return [](ProcessGroup& group, Tensor& bucket) {
    PendingReduction r;
    r.work = group.allreduce(bucket, ReduceOp::kAvg);
    return r;
  };
}

CommHook fp16_compress() { return compress_to(kFloat16); }
CommHook bf16_compress() { return compress_to(kBFloat16); }

}  // namespace colony::dist::comm_hooks
