#include "distributed/gloo/cuda_staging.h"

#include <mutex>
#include <utility>

#include "ops/raw_ops.h"
#include "runtime/stream.h"

namespace colony::dist::gloo_detail {
namespace {

class CopyBackWork final : public Work {
 public:
  CopyBackWork(std::shared_ptr<Work> inner, std::vector<std::pair<Tensor, Tensor>> results)
      : inner_(std::move(inner)), results_(std::move(results)) {}

  bool is_completed() const override { return inner_->is_completed(); }
  void wait(std::chrono::milliseconds timeout) override {
    inner_->wait(timeout);
    std::lock_guard<std::mutex> lock(mu_);
    if (copied_) return;
    copied_ = true;
    for (auto& [device, host] : results_) {
      device.copy_(host);
      // The host buffer may be freed once this Work is: the copy must have read it by then.
      current_stream(device.device()).synchronize();
    }
  }
  std::exception_ptr exception() const override { return inner_->exception(); }
  std::string description() const override { return inner_->description(); }
  // The host ran it: its times are the inner Work's (DDP's stats and trace read them).
  TimePoint started_at() const override { return inner_->started_at(); }
  TimePoint finished_at() const override { return inner_->finished_at(); }

 private:
  std::shared_ptr<Work> inner_;
  std::vector<std::pair<Tensor, Tensor>> results_;
  std::mutex mu_;
  bool copied_ = false;
};

}  // namespace

Tensor stage_to_host(const Tensor& t) {
  Tensor host = raw::empty(t.sizes(), TensorOptions(t.dtype()).pinned_memory(true));
  host.copy_(t);
  // copy_ from the device is queued on the current stream: the host reads it only once it ran.
  current_stream(t.device()).synchronize();
  return host;
}

std::shared_ptr<Work> copy_back_on_wait(std::shared_ptr<Work> inner, std::vector<std::pair<Tensor, Tensor>> results) {
  return std::make_shared<CopyBackWork>(std::move(inner), std::move(results));
}

}  // namespace colony::dist::gloo_detail
