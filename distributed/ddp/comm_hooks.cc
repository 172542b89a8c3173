#include "distributed/ddp/comm_hooks.h"

#include "tensor/grad_mode.h"
#include "tensor/raw_ops.h"

namespace colony::dist::comm_hooks {
namespace {

// Gloo reduces host memory only: a CUDA bucket goes through a host copy (until NCCL lands).
bool needs_host_staging(const ProcessGroup& group, const Tensor& bucket) {
  return bucket.device().is_cuda() && group.backend_name() == "gloo";
}

CommHook compress_to(DType wire) {
  return [wire](ProcessGroup& group, Tensor& bucket) {
    NoGradGuard no_grad;
    Tensor scaled = raw::binary(raw::BinaryOp::Div, bucket, static_cast<double>(group.size()));
    Tensor half = raw::to(scaled, kCPU, wire);
    if (!half.is_contiguous()) half = raw::contiguous(half);
    PendingReduction r;
    r.work = group.allreduce(half, ReduceOp::kSum);
    Tensor target = bucket;
    r.finish = [half, target]() mutable { raw::copy_(target, half); };
    return r;
  };
}

}  // namespace

CommHook allreduce_avg() {
  return [](ProcessGroup& group, Tensor& bucket) {
    PendingReduction r;
    if (!needs_host_staging(group, bucket)) {
      r.work = group.allreduce(bucket, ReduceOp::kAvg);
      return r;
    }
    Tensor host = raw::to(bucket, kCPU, bucket.dtype());
    r.work = group.allreduce(host, ReduceOp::kAvg);
    Tensor target = bucket;
    r.finish = [host, target]() mutable { raw::copy_(target, host); };
    return r;
  };
}

CommHook fp16_compress() { return compress_to(kFloat16); }
CommHook bf16_compress() { return compress_to(kBFloat16); }

}  // namespace colony::dist::comm_hooks
