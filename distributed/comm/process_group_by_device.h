// One group made of two: collectives on CUDA tensors go to one backend (NCCL), all others to the
// host one (Gloo), as torch's default "cpu:gloo,cuda:nccl" group. What init_process_group builds
// when it picks NCCL, so that the host collectives a program also makes (DDP's model check, a
// logged loss, a barrier) keep working. Each backend numbers its own collectives.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "distributed/comm/process_group.h"

namespace colony::dist {

class ProcessGroupByDevice final : public ProcessGroup {
 public:
  // Both groups hold the same ranks; `cuda` may not be null.
  ProcessGroupByDevice(std::shared_ptr<ProcessGroup> host, std::shared_ptr<ProcessGroup> cuda);

  int rank() const override { return host_->rank(); }
  int size() const override { return host_->size(); }
  // "gloo+nccl": host backend, then the CUDA one.
  std::string backend_name() const override { return host_->backend_name() + "+" + cuda_->backend_name(); }

  std::shared_ptr<Work> allreduce(Tensor& tensor, ReduceOp op = ReduceOp::kSum,
                                  const CollectiveOptions& opts = {}) override;
  std::shared_ptr<Work> broadcast(Tensor& tensor, int root = 0, const CollectiveOptions& opts = {}) override;
  std::shared_ptr<Work> allgather(std::vector<Tensor>& outputs, const Tensor& input,
                                  const CollectiveOptions& opts = {}) override;
  std::shared_ptr<Work> reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                       ReduceOp op = ReduceOp::kSum, const CollectiveOptions& opts = {}) override;
  std::shared_ptr<Work> allgather_into_tensor(Tensor& output, const Tensor& input,
                                              const CollectiveOptions& opts = {}) override;
  std::shared_ptr<Work> reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op = ReduceOp::kSum,
                                              const CollectiveOptions& opts = {}) override;
  // On the host backend: every rank's host reaches it.
  std::shared_ptr<Work> barrier(const CollectiveOptions& opts = {}) override;
  void abort(const std::string& reason) override;
  // Both groups' collectives: every rank makes the same calls, so the sums compare like the counts.
  uint64_t collectives_started() const override { return host_->collectives_started() + cuda_->collectives_started(); }
  void set_failure_monitor(std::weak_ptr<FailureMonitor> monitor) override;

  const std::shared_ptr<ProcessGroup>& host_group() const { return host_; }
  const std::shared_ptr<ProcessGroup>& cuda_group() const { return cuda_; }

 private:
  ProcessGroup& route(const Tensor& t) { return t.defined() && t.is_cuda() ? *cuda_ : *host_; }

  std::shared_ptr<ProcessGroup> host_;
  std::shared_ptr<ProcessGroup> cuda_;
};

}  // namespace colony::dist
