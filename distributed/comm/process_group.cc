#include "distributed/comm/process_group.h"

#include <exception>
#include <stdexcept>
#include <utility>

#include "ops/raw_ops.h"

namespace colony::dist {

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kAvg: return "avg";
    case ReduceOp::kMax: return "max";
    case ReduceOp::kMin: return "min";
  }
  return "?";
}

namespace {

// "rank 3" or "ranks 1, 2": the subject of the phrases below.
std::string ranks_subject(const std::vector<int>& ranks) {
  std::string who;
  for (size_t i = 0; i < ranks.size(); ++i) who += (i ? ", " : "") + std::to_string(ranks[i]);
  return (ranks.size() == 1 ? "rank " : "ranks ") + who;
}

}  // namespace

std::string unreachable_phrase(const std::vector<int>& ranks) {
  return ranks_subject(ranks) + (ranks.size() == 1 ? " is" : " are") + " unreachable";
}

std::string stalled_phrase(const std::vector<int>& ranks) { return ranks_subject(ranks) + " stopped making progress"; }

namespace {

// The size() blocks of a flat collective's `flat` tensor, as views, after checking it holds one
// `block` per rank.
std::vector<Tensor> split_into_rank_blocks(const std::string& op, const Tensor& flat, const std::string& flat_name,
                                           const Tensor& block, const std::string& block_name, int world) {
  if (!flat.defined() || !block.defined())
    throw std::invalid_argument(op + ": " + (flat.defined() ? block_name : flat_name) + " is an undefined tensor");
  if (flat.numel() > 0 && !flat.is_contiguous())
    throw std::invalid_argument(op + ": " + flat_name + " must be contiguous, got shape " + shape_str(flat.sizes()) +
                                " with strides " + shape_str(flat.strides()));
  if (flat.dtype() != block.dtype() || flat.device() != block.device() || flat.numel() != block.numel() * world)
    throw std::invalid_argument(op + ": " + flat_name + " is " + dtype_name(flat.dtype()) + " on " +
                                flat.device().str() + " with " + std::to_string(flat.numel()) + " elements, but it must be " +
                                dtype_name(block.dtype()) + " on " + block.device().str() + " with " +
                                std::to_string(world) + " x " + std::to_string(block.numel()) + " elements (" +
                                block_name + "'s count per rank)");
  const Tensor whole = raw::reshape(flat, {flat.numel()});  // a view: contiguous (or empty)
  std::vector<Tensor> blocks;
  for (int r = 0; r < world; ++r) blocks.push_back(raw::narrow(whole, 0, r * block.numel(), block.numel()));
  return blocks;
}

}  // namespace

std::shared_ptr<Work> ProcessGroup::allgather_into_tensor(Tensor& output, const Tensor& input,
                                                          const CollectiveOptions& opts) {
  std::vector<Tensor> outputs =
      split_into_rank_blocks("allgather_into_tensor", output, "output", input, "input", size());
  return allgather(outputs, input, opts);
}

std::shared_ptr<Work> ProcessGroup::reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op,
                                                          const CollectiveOptions& opts) {
  const std::vector<Tensor> inputs =
      split_into_rank_blocks("reduce_scatter_tensor", input, "input", output, "output", size());
  return reduce_scatter(output, inputs, op, opts);
}

void ProcessGroup::set_failure_monitor(std::weak_ptr<FailureMonitor> monitor) {
  std::lock_guard<std::mutex> lock(failure_monitor_mu_);
  failure_monitor_ = std::move(monitor);
}

std::shared_ptr<FailureMonitor> ProcessGroup::failure_monitor() const {
  std::lock_guard<std::mutex> lock(failure_monitor_mu_);
  return failure_monitor_.lock();
}

void ProcessGroup::wait_and_explain(const std::shared_ptr<Work>& work) const {
  try {
    work->wait();
  } catch (const std::exception& e) {
    const std::shared_ptr<FailureMonitor> monitor = failure_monitor();
    if (monitor && dynamic_cast<const TimeoutError*>(&e) != nullptr &&
        dynamic_cast<const StalledRanksError*>(&e) == nullptr) {
      // The collective waited its whole timeout. When other ranks never started it while their
      // heartbeat goes on, they are the ones stuck (this rank's own error names only the
      // collective, and the peers it was waiting for).
      FailureMonitor::Stall stall = monitor->stalled_ranks();
      if (!stall.ranks.empty()) throw StalledRanksError(e.what(), stall.description, stall.ranks);
    }
    const std::string cause = monitor ? monitor->failure_cause() : "";
    if (cause.empty() || std::string(e.what()).find(cause) != std::string::npos) throw;
    const auto* collective = dynamic_cast<const CollectiveError*>(&e);
    throw CollectiveError(std::string(e.what()) + "; the job is stopping because " + cause,
                          collective ? collective->unreachable() : std::vector<int>{});
  }
}

}  // namespace colony::dist
