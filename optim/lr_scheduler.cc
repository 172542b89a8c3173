#include "optim/lr_scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "ops/raw_ops.h"

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
  set_momentum_at(last_epoch_);
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

ExponentialLR::ExponentialLR(Optimizer& opt, double gamma) : LRScheduler(opt), gamma_(gamma) {
  if (!(gamma > 0) || !std::isfinite(gamma)) {
    throw std::invalid_argument("ExponentialLR: gamma must be positive and finite, got " + std::to_string(gamma));
  }
}
double ExponentialLR::lr_at(int64_t epoch, size_t, double base) const {
  return base * std::pow(gamma_, static_cast<double>(epoch));
}

ConstantLR::ConstantLR(Optimizer& opt, double factor, int64_t total_iters)
    : LRScheduler(opt), factor_(factor), total_(total_iters) {
  if (!(factor >= 0 && factor <= 1)) {
    throw std::invalid_argument("ConstantLR: factor must be in [0, 1], got " + std::to_string(factor));
  }
  if (total_iters < 0) throw std::invalid_argument("ConstantLR: total_iters must be >= 0, got " + std::to_string(total_iters));
  apply();  // factor * base from the start, as in PyTorch
}
double ConstantLR::lr_at(int64_t epoch, size_t, double base) const { return epoch < total_ ? base * factor_ : base; }

PolynomialLR::PolynomialLR(Optimizer& opt, int64_t total_iters, double power)
    : LRScheduler(opt), total_(total_iters), power_(power) {
  if (total_iters <= 0) throw std::invalid_argument("PolynomialLR: total_iters must be positive, got " + std::to_string(total_iters));
  if (!std::isfinite(power)) throw std::invalid_argument("PolynomialLR: power must be finite");
}
double PolynomialLR::lr_at(int64_t epoch, size_t, double base) const {
  const double done = static_cast<double>(std::min(epoch, total_)) / static_cast<double>(total_);
  return base * std::pow(1.0 - done, power_);
}

CosineAnnealingWarmRestarts::CosineAnnealingWarmRestarts(Optimizer& opt, int64_t t_0, int64_t t_mult, double eta_min)
    : LRScheduler(opt), t_0_(t_0), t_mult_(t_mult), eta_min_(eta_min) {
  if (t_0 <= 0) throw std::invalid_argument("CosineAnnealingWarmRestarts: T_0 must be positive, got " + std::to_string(t_0));
  if (t_mult < 1) throw std::invalid_argument("CosineAnnealingWarmRestarts: T_mult must be >= 1, got " + std::to_string(t_mult));
}
double CosineAnnealingWarmRestarts::lr_at(int64_t epoch, size_t, double base) const {
  // The restarts in whole epochs, as torch's step() counts them: T_cur wraps at T_i, which grows
  // by T_mult at each wrap (at most ~63 wraps before T_i passes any int64 epoch when T_mult > 1).
  int64_t t_cur = epoch, t_i = t_0_;
  if (t_mult_ == 1) {
    t_cur = epoch % t_0_;
  } else {
    while (t_cur >= t_i) {
      t_cur -= t_i;
      t_i *= t_mult_;
    }
  }
  return eta_min_ + (base - eta_min_) * (1 + std::cos(M_PI * static_cast<double>(t_cur) / static_cast<double>(t_i))) / 2;
}

OneCycleLR::OneCycleLR(Optimizer& opt, const OneCycleLROptions& o) : LRScheduler(opt), options_(o) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("OneCycleLR: " + what); };
  if (o.total_steps() <= 0) fail("total_steps must be positive, got " + std::to_string(o.total_steps()));
  if (!(o.pct_start() >= 0 && o.pct_start() <= 1)) fail("pct_start must be in [0, 1], got " + std::to_string(o.pct_start()));
  if (o.anneal_strategy() != "cos" && o.anneal_strategy() != "linear") {
    fail("anneal_strategy must be \"cos\" or \"linear\", got \"" + o.anneal_strategy() + "\"");
  }
  if (o.max_lr().size() == 1) options_.max_lr(std::vector<double>(num_groups(), o.max_lr()[0]));
  if (options_.max_lr().size() != num_groups()) {
    fail("got " + std::to_string(o.max_lr().size()) + " max_lr values for an optimizer with " +
         std::to_string(num_groups()) + " parameter groups; give one, or one per group");
  }
  for (double m : options_.max_lr()) {
    if (!(m >= 0) || !std::isfinite(m)) fail("max_lr must be non-negative and finite, got " + std::to_string(m));
  }
  if (!(o.div_factor() > 0) || !(o.final_div_factor() > 0)) fail("div_factor and final_div_factor must be positive");
  const double total = static_cast<double>(o.total_steps()), pct = o.pct_start();
  const double lo = o.base_momentum(), hi = o.max_momentum();
  if (o.three_phase()) {
    phases_ = {{pct * total - 1, kInitial, kMax, hi, lo},
               {2 * pct * total - 2, kMax, kInitial, lo, hi},
               {total - 1, kInitial, kFinal, hi, hi}};
  } else {
    phases_ = {{pct * total - 1, kInitial, kMax, hi, lo}, {total - 1, kMax, kFinal, lo, hi}};
  }
  // torch sets each group's initial_lr to the initial rate, and the momentum to max_momentum.
  for (size_t g = 0; g < num_groups(); ++g) opt.param_groups()[g].initial_lr = rate(g, kInitial);
  if (o.cycle_momentum()) {
    const HyperParams options = opt.defaults().to_map();
    if (options.count("momentum")) {
      momentum_name_ = "momentum";
    } else if (options.count("beta1")) {
      momentum_name_ = "beta1";
    } else {
      fail("cycle_momentum needs an optimizer with momentum (SGD, RMSprop) or beta1 (Adam, AdamW, Adamax, "
           "NAdam, RAdam); this one (" + opt.defaults().type_name() + ") has neither. "
           "Set cycle_momentum(false)");
    }
  }
  apply();
}

double OneCycleLR::rate(size_t group, int which) const {
  const double initial = options_.max_lr()[group] / options_.div_factor();
  return which == kInitial ? initial : which == kMax ? options_.max_lr()[group] : initial / options_.final_div_factor();
}

double OneCycleLR::anneal(double start, double end, double pct) const {
  if (options_.anneal_strategy() == "linear") return (end - start) * pct + start;
  return end + (start - end) / 2.0 * (std::cos(M_PI * pct) + 1);
}

std::pair<const OneCycleLR::Phase*, double> OneCycleLR::phase_at(int64_t epoch) const {
  if (epoch > options_.total_steps()) {
    throw std::invalid_argument("OneCycleLR: tried to step " + std::to_string(epoch) +
                                " times; the specified number of total steps is " +
                                std::to_string(options_.total_steps()));
  }
  // torch's get_lr: the first phase whose end the step has not passed, or the last.
  double start = 0;
  const double step = static_cast<double>(epoch);
  for (size_t i = 0; i < phases_.size(); ++i) {
    const Phase& p = phases_[i];
    if (step <= p.end_step || i + 1 == phases_.size()) return {&p, (step - start) / (p.end_step - start)};
    start = p.end_step;
  }
  return {&phases_.back(), 1.0};  // not reached: the loop returns at the last phase
}

double OneCycleLR::lr_at(int64_t epoch, size_t group, double) const {
  auto [phase, pct] = phase_at(epoch);
  return anneal(rate(group, phase->start_lr), rate(group, phase->end_lr), pct);
}

void OneCycleLR::set_momentum_at(int64_t epoch) const {
  if (momentum_name_.empty()) return;
  auto [phase, pct] = phase_at(epoch);
  const double momentum = anneal(phase->start_momentum, phase->end_momentum, pct);
  for (ParamGroup& group : mutable_optimizer().param_groups()) group.options.get().update_from_map({{momentum_name_, momentum}});
}

namespace {

// One value, or one per group (torch's _format_param), as a value per group.
std::vector<double> per_group(const char* scheduler, const char* name, const std::vector<double>& v, size_t groups) {
  if (v.size() == 1) return std::vector<double>(groups, v[0]);
  if (v.size() != groups) {
    throw std::invalid_argument(std::string(scheduler) + ": expected " + std::to_string(groups) + " values for " +
                                name + ", got " + std::to_string(v.size()));
  }
  return v;
}

}  // namespace

Optimizer& CyclicLR::with_base_lrs(Optimizer& opt, const CyclicLROptions& o) {
  const auto base = per_group("CyclicLR", "base_lr", o.base_lr(), opt.param_groups().size());
  for (size_t g = 0; g < base.size(); ++g) opt.set_lr(g, base[g]);  // before LRScheduler records initial_lr
  return opt;
}

CyclicLR::CyclicLR(Optimizer& opt, const CyclicLROptions& o) : LRScheduler(with_base_lrs(opt, o)), options_(o) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("CyclicLR: " + what); };
  options_.base_lr(per_group("CyclicLR", "base_lr", o.base_lr(), num_groups()));
  options_.max_lr(per_group("CyclicLR", "max_lr", o.max_lr(), num_groups()));
  if (o.step_size_up() < 1) fail("step_size_up must be at least 1, got " + std::to_string(o.step_size_up()));
  const int64_t down = o.step_size_down().value_or(o.step_size_up());
  if (down < 0) fail("step_size_down must be non-negative, got " + std::to_string(down));
  total_size_ = static_cast<double>(o.step_size_up() + down);
  step_ratio_ = static_cast<double>(o.step_size_up()) / total_size_;
  if (!o.scale_fn()) {
    if (o.mode() == "triangular" || o.mode() == "triangular2") {
      options_.scale_mode("cycle");
    } else if (o.mode() == "exp_range") {
      options_.scale_mode("iterations");
    } else {
      fail("mode is invalid and scale_fn is None (mode \"" + o.mode() +
           "\"; expected \"triangular\", \"triangular2\" or \"exp_range\")");
    }
  } else if (o.scale_mode() != "cycle" && o.scale_mode() != "iterations") {
    fail("scale_mode must be \"cycle\" or \"iterations\", got \"" + o.scale_mode() + "\"");
  }
  if (o.cycle_momentum()) {
    const HyperParams options = opt.defaults().to_map();
    if (options.count("momentum")) {
      momentum_name_ = "momentum";
    } else if (options.count("beta1")) {
      momentum_name_ = "beta1";
    } else {
      fail("optimizer must support momentum or beta1 with `cycle_momentum` option enabled (" +
           opt.defaults().type_name() + " has neither; set cycle_momentum(false))");
    }
    options_.base_momentum(per_group("CyclicLR", "base_momentum", o.base_momentum(), num_groups()));
    options_.max_momentum(per_group("CyclicLR", "max_momentum", o.max_momentum(), num_groups()));
  }
  apply();
}

std::pair<double, double> CyclicLR::position(int64_t epoch) const {
  const double e = static_cast<double>(epoch);
  const double cycle = std::floor(1 + e / total_size_);
  const double x = 1.0 + e / total_size_ - cycle;
  const double factor = x <= step_ratio_ ? x / step_ratio_ : (x - 1) / (step_ratio_ - 1);
  const double arg = options_.scale_mode() == "cycle" ? cycle : e;
  double scale;
  if (options_.scale_fn()) {
    scale = options_.scale_fn()(arg);
  } else if (options_.mode() == "triangular") {
    scale = 1.0;
  } else if (options_.mode() == "triangular2") {
    scale = 1 / std::pow(2.0, arg - 1);
  } else {
    scale = std::pow(options_.gamma(), arg);
  }
  return {factor, scale};
}

double CyclicLR::lr_at(int64_t epoch, size_t group, double) const {
  auto [factor, scale] = position(epoch);
  const double base = options_.base_lr()[group];
  return base + (options_.max_lr()[group] - base) * factor * scale;
}

void CyclicLR::set_momentum_at(int64_t epoch) const {
  if (momentum_name_.empty()) return;
  auto [factor, scale] = position(epoch);
  auto& groups = mutable_optimizer().param_groups();
  for (size_t g = 0; g < groups.size(); ++g) {
    const double hi = options_.max_momentum()[g];
    const double momentum = hi - (hi - options_.base_momentum()[g]) * factor * scale;
    groups[g].options.get().update_from_map({{momentum_name_, momentum}});
  }
}

SWALR::SWALR(Optimizer& opt, std::vector<double> swa_lr, int64_t anneal_epochs, const std::string& anneal_strategy)
    : LRScheduler(opt), anneal_epochs_(anneal_epochs), cosine_(anneal_strategy == "cos") {
  swa_lrs_ = per_group("SWALR", "swa_lr", swa_lr, num_groups());
  if (anneal_strategy != "cos" && anneal_strategy != "linear") {
    throw std::invalid_argument("SWALR: anneal_strategy must be one of 'cos' or 'linear', instead got " +
                                anneal_strategy);
  }
  if (anneal_epochs < 0) {
    throw std::invalid_argument("SWALR: anneal_epochs must be equal or greater than 0, got " +
                                std::to_string(anneal_epochs));
  }
  apply();
}

double SWALR::anneal(double t) const { return cosine_ ? (1 - std::cos(M_PI * t)) / 2 : t; }

double SWALR::lr_at(int64_t epoch, size_t group, double) const {
  // torch's get_lr: the rate before this step, recovered from the present one, then moved on.
  const double step = anneal_epochs_ == 0 ? std::max<double>(1, static_cast<double>(epoch)) : static_cast<double>(epoch);
  const double span = std::max<double>(1, static_cast<double>(anneal_epochs_));
  const double swa = swa_lrs_[group], lr = optimizer().lr(group);
  const double prev_alpha = anneal(std::max(0.0, std::min(1.0, (step - 1) / span)));
  const double prev_lr = prev_alpha == 1 ? swa : (lr - prev_alpha * swa) / (1 - prev_alpha);
  const double alpha = anneal(std::max(0.0, std::min(1.0, step / span)));
  return swa * alpha + prev_lr * (1 - alpha);
}

MultiplicativeLR::MultiplicativeLR(Optimizer& opt, Lambda lr_lambda)
    : MultiplicativeLR(opt, std::vector<Lambda>(opt.param_groups().size(), std::move(lr_lambda))) {}

MultiplicativeLR::MultiplicativeLR(Optimizer& opt, std::vector<Lambda> lr_lambdas)
    : LRScheduler(opt),
      lambdas_(std::move(lr_lambdas)),
      product_(lambdas_.size(), 1.0),
      product_epoch_(lambdas_.size(), 0) {
  if (lambdas_.size() != num_groups()) {
    throw std::invalid_argument("MultiplicativeLR: got " + std::to_string(lambdas_.size()) +
                                " lr_lambdas for an optimizer with " + std::to_string(num_groups()) +
                                " parameter groups; give one, or one per group");
  }
  for (size_t g = 0; g < lambdas_.size(); ++g) {
    if (!lambdas_[g]) throw std::invalid_argument("MultiplicativeLR: lr_lambda " + std::to_string(g) + " is empty");
  }
  apply();  // epoch 0: the base rate
}

double MultiplicativeLR::lr_at(int64_t epoch, size_t group, double base) const {
  if (product_epoch_[group] > epoch) {  // resumed at an earlier epoch: from epoch 1 again
    product_[group] = 1.0;
    product_epoch_[group] = 0;
  }
  for (int64_t e = product_epoch_[group] + 1; e <= epoch; ++e) {
    const double factor = lambdas_[group](e);
    if (!std::isfinite(factor)) {
      throw std::invalid_argument("MultiplicativeLR: lr_lambda " + std::to_string(group) + " returned " +
                                  std::to_string(factor) + " at epoch " + std::to_string(e) +
                                  ", expected a finite factor");
    }
    product_[group] *= factor;
    product_epoch_[group] = e;
  }
  return base * product_[group];
}

ChainedScheduler::ChainedScheduler(Optimizer& opt, std::vector<std::shared_ptr<LRScheduler>> schedulers)
    : LRScheduler(opt), schedulers_(std::move(schedulers)) {
  if (schedulers_.empty()) {
    throw std::invalid_argument(
        "ChainedScheduler expects at least one scheduler to be chained, but got no scheduler.");
  }
  for (size_t i = 0; i < schedulers_.size(); ++i) {
    if (!schedulers_[i]) throw std::invalid_argument("ChainedScheduler: scheduler " + std::to_string(i) + " is null");
    if (&schedulers_[i]->optimizer() != &opt) {
      throw std::invalid_argument("ChainedScheduler expects all schedulers to belong to the same optimizer, but got "
                                  "scheduler " + std::to_string(i) + " on another one");
    }
    if (schedulers_[i]->num_groups() != num_groups()) {
      throw std::invalid_argument("ChainedScheduler: scheduler " + std::to_string(i) + " was built for " +
                                  std::to_string(schedulers_[i]->num_groups()) +
                                  " parameter groups, the optimizer has " + std::to_string(num_groups()) + " now");
    }
  }
  apply();  // epoch 0: every scheduler's first factor
}

double ChainedScheduler::lr_at(int64_t epoch, size_t group, double base) const {
  double lr = base;
  for (const auto& s : schedulers_) {
    const double own_base = s->base_lrs_[group];
    lr *= own_base == 0 ? 0.0 : s->lr_at(epoch, group, own_base) / own_base;
  }
  return lr;
}

void ChainedScheduler::set_momentum_at(int64_t epoch) const {
  for (const auto& s : schedulers_) s->set_momentum_at(epoch);
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

void SequentialLR::set_momentum_at(int64_t epoch) const {
  auto [scheduler, local_epoch] = active(epoch);
  scheduler->set_momentum_at(local_epoch);
}

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& optimizer, const ReduceLROnPlateauOptions& o)
    : optimizer_(optimizer), options_(o) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("ReduceLROnPlateau: " + what); };
  if (o.mode() != "min" && o.mode() != "max") fail("mode must be \"min\" or \"max\", got \"" + o.mode() + "\"");
  if (o.threshold_mode() != "rel" && o.threshold_mode() != "abs") {
    fail("threshold_mode must be \"rel\" or \"abs\", got \"" + o.threshold_mode() + "\"");
  }
  if (!(o.factor() < 1.0) || !(o.factor() >= 0)) fail("factor must be in [0, 1), got " + std::to_string(o.factor()));
  if (o.patience() < 0 || o.cooldown() < 0) fail("patience and cooldown must be >= 0");
  if (!std::isfinite(o.threshold()) || !std::isfinite(o.eps())) fail("threshold and eps must be finite");
  const size_t groups = optimizer.param_groups().size();
  min_lrs_ = o.min_lr().size() == 1 ? std::vector<double>(groups, o.min_lr()[0]) : o.min_lr();
  if (min_lrs_.size() != groups) {
    fail("got " + std::to_string(o.min_lr().size()) + " min_lr values for an optimizer with " + std::to_string(groups) +
         " parameter groups; give one, or one per group");
  }
  best_ = o.mode() == "min" ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
}

bool ReduceLROnPlateau::is_better(double a) const {
  const double t = options_.threshold();
  const bool rel = options_.threshold_mode() == "rel";
  if (options_.mode() == "min") return rel ? a < best_ * (1 - t) : a < best_ - t;
  return rel ? a > best_ * (1 + t) : a > best_ + t;
}

void ReduceLROnPlateau::step(double metric) {
  // torch's ReduceLROnPlateau.step, line for line.
  ++last_epoch_;
  if (is_better(metric)) {
    best_ = metric;
    num_bad_epochs_ = 0;
  } else {
    ++num_bad_epochs_;
  }
  if (cooldown_counter_ > 0) {  // bad epochs during the cooldown do not count
    --cooldown_counter_;
    num_bad_epochs_ = 0;
  }
  if (num_bad_epochs_ > options_.patience()) {
    for (size_t g = 0; g < min_lrs_.size(); ++g) {
      const double old_lr = optimizer_.lr(g), new_lr = std::max(old_lr * options_.factor(), min_lrs_[g]);
      if (old_lr - new_lr > options_.eps()) optimizer_.set_lr(g, new_lr);
    }
    cooldown_counter_ = options_.cooldown();
    num_bad_epochs_ = 0;
  }
}

std::vector<double> ReduceLROnPlateau::get_last_lr() const {
  std::vector<double> out;
  for (size_t g = 0; g < optimizer_.param_groups().size(); ++g) out.push_back(optimizer_.lr(g));
  return out;
}

std::vector<std::pair<std::string, Tensor>> ReduceLROnPlateau::state_dict() const {
  auto scalar = [](double v) { return raw::scalar_tensor(v, kFloat64); };
  return {{"best", scalar(best_)},
          {"num_bad_epochs", scalar(static_cast<double>(num_bad_epochs_))},
          {"cooldown_counter", scalar(static_cast<double>(cooldown_counter_))},
          {"last_epoch", scalar(static_cast<double>(last_epoch_))}};
}

void ReduceLROnPlateau::load_state_dict(const std::vector<std::pair<std::string, Tensor>>& state) {
  auto get = [&](const std::string& name) {
    for (const auto& [n, t] : state) {
      if (n != name) continue;
      if (!t.defined() || t.numel() != 1) {
        throw std::invalid_argument("ReduceLROnPlateau::load_state_dict: \"" + name + "\" must hold one number");
      }
      return t.item();
    }
    throw std::invalid_argument("ReduceLROnPlateau::load_state_dict: the state has no \"" + name +
                                "\" (expected best, num_bad_epochs, cooldown_counter, last_epoch)");
  };
  auto counter = [&](const std::string& name) {
    const double v = get(name);
    if (!(v >= 0) || v != std::floor(v) || v > 9e15) {
      throw std::invalid_argument("ReduceLROnPlateau::load_state_dict: \"" + name +
                                  "\" must be a non-negative integer, got " + std::to_string(v));
    }
    return static_cast<int64_t>(v);
  };
  const double best = get("best");
  if (std::isnan(best)) throw std::invalid_argument("ReduceLROnPlateau::load_state_dict: \"best\" is NaN");
  const int64_t bad = counter("num_bad_epochs"), cooldown = counter("cooldown_counter"), epoch = counter("last_epoch");
  best_ = best;
  num_bad_epochs_ = bad;
  cooldown_counter_ = cooldown;
  last_epoch_ = epoch;
}

}  // namespace colony::optim
