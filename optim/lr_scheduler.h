// Learning-rate schedulers (torch.optim.lr_scheduler), in closed form of the epoch count so that
// resuming from a checkpoint (set last_epoch) gives the same rates. Call step() once per epoch
// (or per iteration for warmup), after optimizer.step().
#pragma once

#include <vector>

#include "optim/optimizer.h"

namespace colony::optim {

class LRScheduler {
 public:
  explicit LRScheduler(Optimizer& optimizer);
  virtual ~LRScheduler() = default;
  void step();
  int64_t last_epoch() const { return last_epoch_; }
  // Restores the schedule position (and applies the rate for it).
  void set_last_epoch(int64_t epoch);
  std::vector<double> get_last_lr() const;

 protected:
  // The rate of group g at `epoch`, given its initial rate.
  virtual double lr_at(int64_t epoch, double base_lr) const = 0;
  void apply();

 private:
  Optimizer& optimizer_;
  std::vector<double> base_lrs_;
  int64_t last_epoch_ = 0;
};

// lr = base * gamma^(epoch / step_size)
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& opt, int64_t step_size, double gamma = 0.1);

 protected:
  double lr_at(int64_t epoch, double base) const override;

 private:
  int64_t step_size_;
  double gamma_;
};

// lr = base * gamma^(number of milestones <= epoch)
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& opt, std::vector<int64_t> milestones, double gamma = 0.1);

 protected:
  double lr_at(int64_t epoch, double base) const override;

 private:
  std::vector<int64_t> milestones_;
  double gamma_;
};

// lr = eta_min + (base - eta_min) * (1 + cos(pi * epoch / T_max)) / 2
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& opt, int64_t t_max, double eta_min = 0.0);

 protected:
  double lr_at(int64_t epoch, double base) const override;

 private:
  int64_t t_max_;
  double eta_min_;
};

// Linear warmup (torch's LinearLR): factor goes from start_factor to end_factor over total_iters
// steps, then stays at end_factor.
class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& opt, double start_factor = 1.0 / 3, double end_factor = 1.0, int64_t total_iters = 5);

 protected:
  double lr_at(int64_t epoch, double base) const override;

 private:
  double start_, end_;
  int64_t total_;
};

}  // namespace colony::optim
