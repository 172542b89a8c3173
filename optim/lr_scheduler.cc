#include "optim/lr_scheduler.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace colony::optim {

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {
  for (size_t g = 0; g < optimizer.param_groups().size(); ++g) base_lrs_.push_back(optimizer.lr(g));
}

void LRScheduler::apply() {
  for (size_t g = 0; g < base_lrs_.size(); ++g) optimizer_.set_lr(g, lr_at(last_epoch_, base_lrs_[g]));
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
double StepLR::lr_at(int64_t epoch, double base) const {
  return base * std::pow(gamma_, static_cast<double>(epoch / step_size_));
}

MultiStepLR::MultiStepLR(Optimizer& opt, std::vector<int64_t> milestones, double gamma)
    : LRScheduler(opt), milestones_(std::move(milestones)), gamma_(gamma) {
  if (!std::is_sorted(milestones_.begin(), milestones_.end())) {
    throw std::invalid_argument("MultiStepLR: milestones must be increasing");
  }
}
double MultiStepLR::lr_at(int64_t epoch, double base) const {
  auto passed = std::upper_bound(milestones_.begin(), milestones_.end(), epoch) - milestones_.begin();
  return base * std::pow(gamma_, static_cast<double>(passed));
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& opt, int64_t t_max, double eta_min)
    : LRScheduler(opt), t_max_(t_max), eta_min_(eta_min) {
  if (t_max <= 0) throw std::invalid_argument("CosineAnnealingLR: T_max must be positive, got " + std::to_string(t_max));
}
double CosineAnnealingLR::lr_at(int64_t epoch, double base) const {
  return eta_min_ + (base - eta_min_) * (1 + std::cos(M_PI * static_cast<double>(epoch) / static_cast<double>(t_max_))) / 2;
}

LinearLR::LinearLR(Optimizer& opt, double start_factor, double end_factor, int64_t total_iters)
    : LRScheduler(opt), start_(start_factor), end_(end_factor), total_(total_iters) {
  if (start_factor <= 0 || start_factor > 1) {
    throw std::invalid_argument("LinearLR: start_factor must be in (0, 1], got " + std::to_string(start_factor));
  }
  if (total_iters <= 0) throw std::invalid_argument("LinearLR: total_iters must be positive");
  apply();  // the warmup starts at start_factor * base, as in PyTorch
}
double LinearLR::lr_at(int64_t epoch, double base) const {
  double t = std::min<double>(static_cast<double>(epoch), static_cast<double>(total_)) / static_cast<double>(total_);
  return base * (start_ + (end_ - start_) * t);
}

}  // namespace colony::optim
