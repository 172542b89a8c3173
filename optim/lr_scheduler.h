// Learning-rate schedulers (torch.optim.lr_scheduler), in closed form of the epoch count so that
// resuming from a checkpoint (set last_epoch) gives the same rates. Call step() once per epoch
// (or per iteration for warmup), after optimizer.step().
//
// A scheduler's base rate for a group is the group's initial_lr (the rate before the first
// scheduler on the optimizer changed it), as torch's; schedulers hold the optimizer by reference,
// so it must outlive them.
//
// Linear warm-up then cosine decay (nanoGPT's get_lr, with PyTorch's classes):
//   SequentialLR sched(opt, {std::make_shared<LinearLR>(opt, 1e-3, 1.0, warmup),
//                            std::make_shared<CosineAnnealingLR>(opt, decay_steps, min_lr)},
//                      {warmup});
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "optim/optimizer.h"

namespace colony::optim {

class SequentialLR;

class LRScheduler {
 public:
  explicit LRScheduler(Optimizer& optimizer);
  virtual ~LRScheduler() = default;
  void step();
  int64_t last_epoch() const { return last_epoch_; }
  // Restores the schedule position (and applies the rate for it).
  void set_last_epoch(int64_t epoch);
  std::vector<double> get_last_lr() const;
  const Optimizer& optimizer() const { return optimizer_; }

 protected:
  // The rate of group `group` at `epoch`, given its base rate.
  virtual double lr_at(int64_t epoch, size_t group, double base_lr) const = 0;
  void apply();
  size_t num_groups() const { return base_lrs_.size(); }

 private:
  friend class SequentialLR;  // reads its schedulers' rates at their own epochs
  Optimizer& optimizer_;
  std::vector<double> base_lrs_;
  int64_t last_epoch_ = 0;
};

// lr = base * gamma^(epoch / step_size)
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& opt, int64_t step_size, double gamma = 0.1);

 protected:
  double lr_at(int64_t epoch, size_t group, double base) const override;

 private:
  int64_t step_size_;
  double gamma_;
};

// lr = base * gamma^(number of milestones <= epoch)
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& opt, std::vector<int64_t> milestones, double gamma = 0.1);

 protected:
  double lr_at(int64_t epoch, size_t group, double base) const override;

 private:
  std::vector<int64_t> milestones_;
  double gamma_;
};

// lr = eta_min + (base - eta_min) * (1 + cos(pi * epoch / T_max)) / 2
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& opt, int64_t t_max, double eta_min = 0.0);

 protected:
  double lr_at(int64_t epoch, size_t group, double base) const override;

 private:
  int64_t t_max_;
  double eta_min_;
};

// Linear warmup (torch's LinearLR): factor goes from start_factor (in (0, 1]) to end_factor (in
// [0, 1]) over total_iters steps, then stays at end_factor. The rate is start_factor * base as soon
// as it is built.
class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& opt, double start_factor = 1.0 / 3, double end_factor = 1.0, int64_t total_iters = 5);

 protected:
  double lr_at(int64_t epoch, size_t group, double base) const override;

 private:
  double start_, end_;
  int64_t total_;
};

// lr = base * lr_lambda(epoch) (torch's LambdaLR): one function for every group, or one per
// group (as many as the optimizer has groups). The rate is base * lr_lambda(0) as soon as it is
// built. The functions must be pure functions of the epoch: the rate is recomputed from them on
// resume (set_last_epoch).
class LambdaLR : public LRScheduler {
 public:
  using Lambda = std::function<double(int64_t epoch)>;
  LambdaLR(Optimizer& opt, Lambda lr_lambda);
  LambdaLR(Optimizer& opt, std::vector<Lambda> lr_lambdas);

 protected:
  double lr_at(int64_t epoch, size_t group, double base) const override;

 private:
  std::vector<Lambda> lambdas_;  // one per group
};

// Runs schedulers[0] until epoch milestones[0], then schedulers[1] from its own epoch 0, and so on
// (torch's SequentialLR): at epoch e the rate is that of schedulers[i] at epoch
// e - milestones[i - 1], with i the number of milestones <= e. So the handover at a milestone
// gives the next scheduler's epoch-0 rate (a CosineAnnealingLR's base rate), and a warm-up LinearLR
// never reaches its own total_iters when that equals the milestone. Needs one milestone fewer than
// schedulers, milestones non-negative and non-decreasing, and every scheduler on `opt`. The
// schedulers' own step() must no longer be called; the rate is schedulers[0]'s epoch-0 rate as
// soon as this is built.
class SequentialLR : public LRScheduler {
 public:
  SequentialLR(Optimizer& opt, std::vector<std::shared_ptr<LRScheduler>> schedulers, std::vector<int64_t> milestones);

 protected:
  double lr_at(int64_t epoch, size_t group, double base) const override;

 private:
  // The scheduler that runs at `epoch` and its epoch there.
  std::pair<const LRScheduler*, int64_t> active(int64_t epoch) const;
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<int64_t> milestones_;
};

}  // namespace colony::optim
