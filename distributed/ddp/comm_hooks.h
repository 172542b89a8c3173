// Communication hooks: how DDP turns one bucket of local gradients into their average over the
// group. The default all-reduces the bucket as it is; fp16_compress / bf16_compress halve the
// bytes on the wire (PyTorch's hooks of the same names: divide by the world size first so the
// half-precision sum cannot overflow, all-reduce the half copy, decompress into the bucket).
//
//   ddp->register_comm_hook(dist::comm_hooks::bf16_compress());
#pragma once

#include <functional>
#include <memory>

#include "distributed/comm/process_group.h"

namespace colony::dist {

// What a hook started: the collective in flight, and what to do once it completed (e.g. copy a
// decompressed result into the bucket). After finish() the bucket holds the group's average.
struct PendingReduction {
  std::shared_ptr<Work> work;
  std::function<void()> finish;  // may be empty
};

// Called with the flat gradient bucket (contiguous, one dtype and device). Must start exactly one
// logical reduction over the group, the same on every rank.
using CommHook = std::function<PendingReduction(ProcessGroup& group, Tensor& bucket)>;

namespace comm_hooks {

// All-reduce with ReduceOp::kAvg in the bucket's own dtype.
CommHook allreduce_avg();
// Average through a float16 / bfloat16 copy of the bucket.
CommHook fp16_compress();
CommHook bf16_compress();

}  // namespace comm_hooks
}  // namespace colony::dist
