#include "distributed/comm/process_group_by_device.h"

#include <stdexcept>
#include <utility>

namespace colony::dist {

ProcessGroupByDevice::ProcessGroupByDevice(std::shared_ptr<ProcessGroup> host, std::shared_ptr<ProcessGroup> cuda)
    : host_(std::move(host)), cuda_(std::move(cuda)) {
  if (!host_ || !cuda_) throw std::invalid_argument("ProcessGroupByDevice: both groups are needed");
  if (host_->rank() != cuda_->rank() || host_->size() != cuda_->size())
    throw std::invalid_argument("ProcessGroupByDevice: the groups differ (rank " + std::to_string(host_->rank()) +
                                " of " + std::to_string(host_->size()) + " and rank " + std::to_string(cuda_->rank()) +
                                " of " + std::to_string(cuda_->size()) + ")");
  timeout_ = host_->timeout();
}

std::shared_ptr<Work> ProcessGroupByDevice::allreduce(Tensor& tensor, ReduceOp op, const CollectiveOptions& opts) {
  return route(tensor).allreduce(tensor, op, opts);
}

std::shared_ptr<Work> ProcessGroupByDevice::broadcast(Tensor& tensor, int root, const CollectiveOptions& opts) {
  return route(tensor).broadcast(tensor, root, opts);
}

std::shared_ptr<Work> ProcessGroupByDevice::allgather(std::vector<Tensor>& outputs, const Tensor& input,
                                                      const CollectiveOptions& opts) {
  return route(input).allgather(outputs, input, opts);
}

std::shared_ptr<Work> ProcessGroupByDevice::reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                                           ReduceOp op, const CollectiveOptions& opts) {
  return route(output).reduce_scatter(output, inputs, op, opts);
}

std::shared_ptr<Work> ProcessGroupByDevice::allgather_into_tensor(Tensor& output, const Tensor& input,
                                                                  const CollectiveOptions& opts) {
  return route(input).allgather_into_tensor(output, input, opts);
}

std::shared_ptr<Work> ProcessGroupByDevice::reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op,
                                                                  const CollectiveOptions& opts) {
  return route(output).reduce_scatter_tensor(output, input, op, opts);
}

std::shared_ptr<Work> ProcessGroupByDevice::barrier(const CollectiveOptions& opts) { return host_->barrier(opts); }

void ProcessGroupByDevice::abort(const std::string& reason) {
  host_->abort(reason);
  cuda_->abort(reason);
}

void ProcessGroupByDevice::set_failure_monitor(std::weak_ptr<FailureMonitor> monitor) {
  host_->set_failure_monitor(monitor);
  cuda_->set_failure_monitor(monitor);
  ProcessGroup::set_failure_monitor(std::move(monitor));
}

}  // namespace colony::dist
