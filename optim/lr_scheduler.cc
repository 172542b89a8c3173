#include "optim/lr_scheduler.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace colony::optim {

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {
  for (size_t g = 0; g < optimizer.param_groups().size(); ++g) {
    ParamGroup& group = optimizer.param_groups()[g];
    if (!group.initial_lr) group.initial_lr = optimizer.lr(g);  // torch's group.setdefault("initial_lr", lr)
    base_lrs_.push_back(*group.initial_lr);
  }
}

void LRScheduler::apply() {
  for (size_t g = 0; g < base_lrs_.size(); ++g) optimizer_.set_lr(g, lr_at(last_epoch_, g, base_lrs_[g]));
}

void LRScheduler::step() {
  ++last_epoch_;
  apply();
}

void LRScheduler::set_last_epoch(int64_t epoch) {
  last_epoch_ = epoch;
  apply();
}

std::vector<double> LRScheduler::get_last_lr() const {
  std::vector<double> out;
  for (size_t g = 0; g < base_lrs_.size(); ++g) out.push_back(optimizer_.lr(g));
  return out;
}

StepLR::StepLR(Optimizer& opt, int64_t step_size, double gamma) : LRScheduler(opt), step_size_(step_size), gamma_(gamma) {
  if (step_size <= 0) throw std::invalid_argument("StepLR: step_size must be positive, got " + std::to_string(step_size));
}
double StepLR::lr_at(int64_t epoch, size_t, double base) const {
  return base * std::pow(gamma_, static_cast<double>(epoch / step_size_));
}

MultiStepLR::MultiStepLR(Optimizer& opt, std::vector<int64_t> milestones, double gamma)
    : LRScheduler(opt), milestones_(std::move(milestones)), gamma_(gamma) {
  if (!std::is_sorted(milestones_.begin(), milestones_.end())) {
    throw std::invalid_argument("MultiStepLR: milestones must be increasing");
  }
}
double MultiStepLR::lr_at(int64_t epoch, size_t, double base) const {
  auto passed = std::upper_bound(milestones_.begin(), milestones_.end(), epoch) - milestones_.begin();
  return base * std::pow(gamma_, static_cast<double>(passed));
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& opt, int64_t t_max, double eta_min)
    : LRScheduler(opt), t_max_(t_max), eta_min_(eta_min) {
  if (t_max <= 0) throw std::invalid_argument("CosineAnnealingLR: T_max must be positive, got " + std::to_string(t_max));
}
double CosineAnnealingLR::lr_at(int64_t epoch, size_t, double base) const {
  return eta_min_ + (base - eta_min_) * (1 + std::cos(M_PI * static_cast<double>(epoch) / static_cast<double>(t_max_))) / 2;
}

LinearLR::LinearLR(Optimizer& opt, double start_factor, double end_factor, int64_t total_iters)
    : LRScheduler(opt), start_(start_factor), end_(end_factor), total_(total_iters) {
  if (start_factor <= 0 || start_factor > 1) {
    throw std::invalid_argument("LinearLR: start_factor must be in (0, 1], got " + std::to_string(start_factor));
  }
  if (end_factor < 0 || end_factor > 1) {
    throw std::invalid_argument("LinearLR: end_factor must be in [0, 1], got " + std::to_string(end_factor));
  }
  if (total_iters <= 0) throw std::invalid_argument("LinearLR: total_iters must be positive");
  apply();  // the warmup starts at start_factor * base, as in PyTorch
}
double LinearLR::lr_at(int64_t epoch, size_t, double base) const {
  double t = std::min<double>(static_cast<double>(epoch), static_cast<double>(total_)) / static_cast<double>(total_);
  return base * (start_ + (end_ - start_) * t);
}

LambdaLR::LambdaLR(Optimizer& opt, Lambda lr_lambda)
    : LambdaLR(opt, std::vector<Lambda>(opt.param_groups().size(), std::move(lr_lambda))) {}

LambdaLR::LambdaLR(Optimizer& opt, std::vector<Lambda> lr_lambdas)
    : LRScheduler(opt), lambdas_(std::move(lr_lambdas)) {
  if (lambdas_.size() != num_groups()) {
    throw std::invalid_argument("LambdaLR: got " + std::to_string(lambdas_.size()) +
                                " lr_lambdas for an optimizer with " + std::to_string(num_groups()) +
                                " parameter groups; give one, or one per group");
  }
  for (size_t g = 0; g < lambdas_.size(); ++g) {
    if (!lambdas_[g]) throw std::invalid_argument("LambdaLR: lr_lambda " + std::to_string(g) + " is empty");
  }
  apply();  // epoch 0's rate, base * lr_lambda(0), as in PyTorch
}

double LambdaLR::lr_at(int64_t epoch, size_t group, double base) const {
  const double factor = lambdas_[group](epoch);
  if (!std::isfinite(factor)) {
    throw std::invalid_argument("LambdaLR: lr_lambda " + std::to_string(group) + " returned " +
                                std::to_string(factor) + " at epoch " + std::to_string(epoch) +
                                ", expected a finite factor");
  }
  return base * factor;
}

SequentialLR::SequentialLR(Optimizer& opt, std::vector<std::shared_ptr<LRScheduler>> schedulers,
                           std::vector<int64_t> milestones)
    : LRScheduler(opt), schedulers_(std::move(schedulers)), milestones_(std::move(milestones)) {
  if (schedulers_.empty()) throw std::invalid_argument("SequentialLR: needs at least one scheduler");
  for (size_t i = 0; i < schedulers_.size(); ++i) {
    if (!schedulers_[i]) throw std::invalid_argument("SequentialLR: scheduler " + std::to_string(i) + " is null");
    if (&schedulers_[i]->optimizer() != &opt) {
      throw std::invalid_argument("SequentialLR: scheduler " + std::to_string(i) +
                                  " belongs to another optimizer; every scheduler must be built on the optimizer "
                                  "given to SequentialLR");
    }
    if (schedulers_[i]->num_groups() != num_groups()) {
      throw std::invalid_argument("SequentialLR: scheduler " + std::to_string(i) + " was built for " +
                                  std::to_string(schedulers_[i]->num_groups()) +
                                  " parameter groups, the optimizer has " + std::to_string(num_groups()) + " now");
    }
  }
  if (milestones_.size() + 1 != schedulers_.size()) {
    throw std::invalid_argument("SequentialLR: expected one milestone fewer than schedulers, got " +
                                std::to_string(schedulers_.size()) + " schedulers and " +
                                std::to_string(milestones_.size()) + " milestones");
  }
  for (size_t i = 0; i < milestones_.size(); ++i) {
    if (milestones_[i] < 0 || (i > 0 && milestones_[i] < milestones_[i - 1])) {
      throw std::invalid_argument("SequentialLR: milestones must be non-negative and non-decreasing; milestone " +
                                  std::to_string(i) + " is " + std::to_string(milestones_[i]));
    }
  }
  apply();  // epoch 0: the first scheduler's first rate, whatever the others set while being built
}

std::pair<const LRScheduler*, int64_t> SequentialLR::active(int64_t epoch) const {
  const size_t i = std::upper_bound(milestones_.begin(), milestones_.end(), epoch) - milestones_.begin();
  return {schedulers_[i].get(), i == 0 ? epoch : epoch - milestones_[i - 1]};
}

double SequentialLR::lr_at(int64_t epoch, size_t group, double) const {
  auto [scheduler, local_epoch] = active(epoch);
  return scheduler->lr_at(local_epoch, group, scheduler->base_lrs_[group]);
}

}  // namespace colony::optim
