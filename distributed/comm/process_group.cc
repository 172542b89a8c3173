#include "distributed/comm/process_group.h"

#include <exception>
#include <utility>

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

std::string unreachable_phrase(const std::vector<int>& ranks) {
  std::string who;
  for (size_t i = 0; i < ranks.size(); ++i) who += (i ? ", " : "") + std::to_string(ranks[i]);
  return (ranks.size() == 1 ? "rank " : "ranks ") + who + (ranks.size() == 1 ? " is" : " are") + " unreachable";
}

std::string stalled_phrase(const std::vector<int>& ranks) {
  std::string who;
  for (size_t i = 0; i < ranks.size(); ++i) who += (i ? ", " : "") + std::to_string(ranks[i]);
  return (ranks.size() == 1 ? "rank " : "ranks ") + who + " stopped making progress";
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
