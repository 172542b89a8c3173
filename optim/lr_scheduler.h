// Learning-rate schedulers (torch.optim.lr_scheduler), in closed form of the epoch count so that
// resuming from a checkpoint (set last_epoch) gives the same rates. Call step() once per epoch
// (or per iteration for warmup), after optimizer.step(). ReduceLROnPlateau, which follows a
// metric instead of the epoch count, is the exception: it keeps state, saved by its state_dict.
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
#include <optional>
#include <string>
#include <vector>

#include "base/arg.h"

#include "optim/optimizer.h"

namespace colony::optim {

class SequentialLR;
class ChainedScheduler;

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
  // What a scheduler sets besides the rates at `epoch`: OneCycleLR's momentum. Run after the rates
  // by apply(), and by SequentialLR for the scheduler it runs.
  virtual void set_momentum_at(int64_t /*epoch*/) const {}
  void apply();
  size_t num_groups() const { return base_lrs_.size(); }
  Optimizer& mutable_optimizer() const { return optimizer_; }

 private:
  friend class SequentialLR;      // reads its schedulers' rates at their own epochs
  friend class ChainedScheduler;  // multiplies its schedulers' factors
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

// lr = previous lr * lr_lambda(epoch) from epoch 1 on, base at epoch 0 (torch's MultiplicativeLR),
// so lr = base * lr_lambda(1) * ... * lr_lambda(epoch): one function for every group, or one per
// group. Pure functions of the epoch, as LambdaLR's: the product is kept as the epochs advance and
// recomputed from epoch 1 on resume.
class MultiplicativeLR : public LRScheduler {
 public:
  using Lambda = std::function<double(int64_t epoch)>;
  MultiplicativeLR(Optimizer& opt, Lambda lr_lambda);
  MultiplicativeLR(Optimizer& opt, std::vector<Lambda> lr_lambdas);

 protected:
  double lr_at(int64_t epoch, size_t group, double base) const override;

 private:
  std::vector<Lambda> lambdas_;  // one per group
  // Per group, the product of the factors of epochs 1..product_epoch_ (a step's rate from the last).
  mutable std::vector<double> product_;
  mutable std::vector<int64_t> product_epoch_;
};

// lr = base * gamma^epoch
class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& opt, double gamma);

 protected:
  double lr_at(int64_t epoch, size_t group, double base) const override;

 private:
  double gamma_;
};

// lr = base * factor for epoch < total_iters, base after (torch's ConstantLR, factor in [0, 1]).
// The rate is factor * base as soon as it is built.
class ConstantLR : public LRScheduler {
 public:
  ConstantLR(Optimizer& opt, double factor = 1.0 / 3, int64_t total_iters = 5);

 protected:
  double lr_at(int64_t epoch, size_t group, double base) const override;

 private:
  double factor_;
  int64_t total_;
};

// lr = base * (1 - min(epoch, total_iters) / total_iters)^power (torch's PolynomialLR): 0 from
// total_iters on.
class PolynomialLR : public LRScheduler {
 public:
  PolynomialLR(Optimizer& opt, int64_t total_iters = 5, double power = 1.0);

 protected:
  double lr_at(int64_t epoch, size_t group, double base) const override;

 private:
  int64_t total_;
  double power_;
};

// SGDR (torch's CosineAnnealingWarmRestarts): cosine from base to eta_min over T_0 epochs, then
// again over T_0 * T_mult, T_0 * T_mult^2, ...: lr = eta_min + (base - eta_min) *
// (1 + cos(pi * T_cur / T_i)) / 2, with T_cur the epochs since the last restart. Steps are whole
// epochs (torch's step() without an argument).
class CosineAnnealingWarmRestarts : public LRScheduler {
 public:
  CosineAnnealingWarmRestarts(Optimizer& opt, int64_t t_0, int64_t t_mult = 1, double eta_min = 0.0);

 protected:
  double lr_at(int64_t epoch, size_t group, double base) const override;

 private:
  int64_t t_0_, t_mult_;
  double eta_min_;
};

// torch's OneCycleLR arguments. max_lr: one rate, or one per parameter group. total_steps: the
// scheduler steps of the whole run (torch's total_steps, or epochs * steps_per_epoch).
struct OneCycleLROptions {
  OneCycleLROptions(double max_lr, int64_t total_steps) : max_lr_({max_lr}), total_steps_(total_steps) {}
  OneCycleLROptions(std::vector<double> max_lr, int64_t total_steps)
      : max_lr_(std::move(max_lr)), total_steps_(total_steps) {}
  COLONY_ARG(std::vector<double>, max_lr);
  COLONY_ARG(int64_t, total_steps);
  COLONY_ARG(double, pct_start) = 0.3;                // the share of the steps spent rising
  COLONY_ARG(std::string, anneal_strategy) = "cos";  // "cos" or "linear"
  COLONY_ARG(bool, cycle_momentum) = true;            // momentum (SGD, RMSprop) or beta1 (Adam, ...) cycled inversely
  COLONY_ARG(double, base_momentum) = 0.85;
  COLONY_ARG(double, max_momentum) = 0.95;
  COLONY_ARG(double, div_factor) = 25.0;           // initial rate = max_lr / div_factor
  COLONY_ARG(double, final_div_factor) = 1e4;      // final rate = initial rate / final_div_factor
  COLONY_ARG(bool, three_phase) = false;           // rise, fall back to the initial rate, then anneal
};

// The 1cycle policy (torch's OneCycleLR): the rate rises from max_lr / div_factor to max_lr over
// the first pct_start of total_steps, then anneals to the initial rate / final_div_factor (cosine
// or linear), and with cycle_momentum the momentum (SGD's momentum, Adam's beta1) moves the other
// way between max_momentum and base_momentum. Like torch it sets each group's initial_lr to the
// initial rate and, with cycle_momentum, the momentum to max_momentum when built (so an SGD built
// without momentum gets it), and refuses to step past total_steps. Step once per batch.
class OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(Optimizer& opt, const OneCycleLROptions& options);
  const OneCycleLROptions& options() const { return options_; }

 protected:
  double lr_at(int64_t epoch, size_t group, double base) const override;
  void set_momentum_at(int64_t epoch) const override;

 private:
  struct Phase {
    double end_step;
    int start_lr, end_lr;  // which rate: kInitial, kMax or kFinal
    double start_momentum, end_momentum;
  };
  // The phase `epoch` falls in, with the fraction of it done (beyond 1 at the very last step).
  std::pair<const Phase*, double> phase_at(int64_t epoch) const;
  double anneal(double start, double end, double pct) const;
  static constexpr int kInitial = 0, kMax = 1, kFinal = 2;
  double rate(size_t group, int which) const;

  OneCycleLROptions options_;
  std::vector<Phase> phases_;
  std::string momentum_name_;  // "momentum" or "beta1"; empty without cycle_momentum
};

// torch's CyclicLR arguments. base_lr, max_lr (and base_momentum, max_momentum): one value, or
// one per parameter group. step_size_down unset: step_size_up.
struct CyclicLROptions {
  CyclicLROptions(double base_lr, double max_lr) : base_lr_({base_lr}), max_lr_({max_lr}) {}
  CyclicLROptions(std::vector<double> base_lr, std::vector<double> max_lr)
      : base_lr_(std::move(base_lr)), max_lr_(std::move(max_lr)) {}
  COLONY_ARG(std::vector<double>, base_lr);
  COLONY_ARG(std::vector<double>, max_lr);
  COLONY_ARG(int64_t, step_size_up) = 2000;            // steps rising from base_lr to max_lr
  COLONY_ARG(std::optional<int64_t>, step_size_down);  // steps falling back (step_size_up unless set)
  COLONY_ARG(std::string, mode) = "triangular";        // "triangular", "triangular2" or "exp_range"
  COLONY_ARG(double, gamma) = 1.0;                     // exp_range's scale: gamma^iterations
  // A custom scale (torch's scale_fn) of the cycle number (scale_mode "cycle", from 1) or of the
  // step count ("iterations"); when set, mode is ignored.
  COLONY_ARG(std::function<double(double)>, scale_fn);
  COLONY_ARG(std::string, scale_mode) = "cycle";
  COLONY_ARG(bool, cycle_momentum) = true;  // momentum (SGD, RMSprop) or beta1 (Adam, ...) cycled inversely
  COLONY_ARG(std::vector<double>, base_momentum) = {0.8};
  COLONY_ARG(std::vector<double>, max_momentum) = {0.9};
};

// torch's CyclicLR: the rate moves between base_lr and max_lr over cycles of step_size_up +
// step_size_down steps, the height of each cycle scaled by mode ("triangular": 1, "triangular2":
// halved each cycle, "exp_range": gamma^step) or scale_fn; with cycle_momentum the momentum (SGD's
// and RMSprop's momentum, the Adam family's beta1) moves the other way between max_momentum and
// base_momentum. As torch it sets each group's rate to base_lr (and momentum to max_momentum)
// when built, and its base rates are base_lr, not the groups' initial_lr. Step once per batch.
// Colony also refuses step_size_up < 1 and step_size_down < 0, where torch divides by zero.
class CyclicLR : public LRScheduler {
 public:
  CyclicLR(Optimizer& opt, const CyclicLROptions& options);
  const CyclicLROptions& options() const { return options_; }

 protected:
  double lr_at(int64_t epoch, size_t group, double base) const override;
  void set_momentum_at(int64_t epoch) const override;

 private:
  // The rising or falling fraction of the cycle at `epoch` and the scale of its height.
  std::pair<double, double> position(int64_t epoch) const;
  static Optimizer& with_base_lrs(Optimizer& opt, const CyclicLROptions& options);
  CyclicLROptions options_;
  double total_size_, step_ratio_;
  std::string momentum_name_;  // "momentum" or "beta1"; empty without cycle_momentum
};

// torch.optim.swa_utils.SWALR: over anneal_epochs steps the rate moves from the group's rate to
// swa_lr (one rate, or one per group) by a cosine ("cos") or linear ("linear") ramp, then stays
// there; use it for the epochs where a model is averaged, after another scheduler:
//   CosineAnnealingLR cosine(opt, 100);  SWALR swa(opt, {0.05});
//   ... if (epoch > swa_start) swa.step(); else cosine.step();
// Unlike Colony's other schedulers (and as torch's) it is chained: each step recovers the rate it
// started from out of the group's present rate, so that it takes over from whatever rate the
// previous scheduler left. set_last_epoch(e) therefore applies step e to the present rate, not the
// closed form.
class SWALR : public LRScheduler {
 public:
  SWALR(Optimizer& opt, std::vector<double> swa_lr, int64_t anneal_epochs = 10,
        const std::string& anneal_strategy = "cos");
  const std::vector<double>& swa_lrs() const { return swa_lrs_; }

 protected:
  double lr_at(int64_t epoch, size_t group, double base) const override;

 private:
  double anneal(double t) const;
  std::vector<double> swa_lrs_;
  int64_t anneal_epochs_;
  bool cosine_;
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
  void set_momentum_at(int64_t epoch) const override;

 private:
  // The scheduler that runs at `epoch` and its epoch there.
  std::pair<const LRScheduler*, int64_t> active(int64_t epoch) const;
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<int64_t> milestones_;
};

// Every scheduler stepped at once, their factors multiplied (torch's ChainedScheduler): at epoch e
// the rate is base * prod_i (schedulers[i]'s rate at e / base), e.g. a ConstantLR warm-up factor
// times an ExponentialLR decay. torch steps each scheduler from the rate the previous one left,
// which is this product for every scheduler whose rate is its base times a factor (StepLR,
// MultiStepLR, ExponentialLR, ConstantLR, LinearLR, LambdaLR, MultiplicativeLR, PolynomialLR, and
// CosineAnnealingLR with eta_min 0); for the others (a CosineAnnealingLR with eta_min > 0,
// OneCycleLR, CyclicLR) torch's recursive chaining has no closed form and Colony's differs. The
// schedulers must all be on `opt` and their own step() no longer called.
class ChainedScheduler : public LRScheduler {
 public:
  ChainedScheduler(Optimizer& opt, std::vector<std::shared_ptr<LRScheduler>> schedulers);

 protected:
  double lr_at(int64_t epoch, size_t group, double base) const override;
  void set_momentum_at(int64_t epoch) const override;

 private:
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
};

struct ReduceLROnPlateauOptions {
  COLONY_ARG(std::string, mode) = "min";  // "min": lower metrics are better; "max": higher
  COLONY_ARG(double, factor) = 0.1;       // new rate = rate * factor, factor < 1
  COLONY_ARG(int64_t, patience) = 10;     // epochs without improvement before a reduction
  COLONY_ARG(double, threshold) = 1e-4;   // what counts as an improvement, see threshold_mode
  // "rel": better than best * (1 -+ threshold); "abs": better than best -+ threshold.
  COLONY_ARG(std::string, threshold_mode) = "rel";
  COLONY_ARG(int64_t, cooldown) = 0;         // epochs after a reduction before counting again
  COLONY_ARG(std::vector<double>, min_lr) = {0.0};  // one floor, or one per parameter group
  COLONY_ARG(double, eps) = 1e-8;            // a reduction smaller than eps is skipped
};

// torch's ReduceLROnPlateau: step(metric) after each evaluation; after more than `patience` epochs
// in a row without the metric improving on the best seen, every group's rate is multiplied by
// factor (not below its min_lr), then `cooldown` epochs pass before bad epochs count again. A NaN
// metric counts as no improvement. It follows the metric, not the epoch count, so a resumed run
// needs its state (the best metric, the counters): state_dict() gives it as tensors
// (nn::save_safetensors writes them), load_state_dict restores it. The rates themselves are the
// optimizer's, restored with its state.
class ReduceLROnPlateau {
 public:
  explicit ReduceLROnPlateau(Optimizer& optimizer, const ReduceLROnPlateauOptions& options = {});
  void step(double metric);
  std::vector<double> get_last_lr() const;
  int64_t last_epoch() const { return last_epoch_; }
  double best() const { return best_; }
  int64_t num_bad_epochs() const { return num_bad_epochs_; }
  int64_t cooldown_counter() const { return cooldown_counter_; }
  // "best", "num_bad_epochs", "cooldown_counter", "last_epoch" as 0-d float64 tensors, as the
  // optimizers' state_dict holds its numbers.
  std::vector<std::pair<std::string, Tensor>> state_dict() const;
  // Checks that every entry is there and in range (counters non-negative integers) before it
  // changes anything.
  void load_state_dict(const std::vector<std::pair<std::string, Tensor>>& state);

 private:
  bool is_better(double metric) const;
  Optimizer& optimizer_;
  ReduceLROnPlateauOptions options_;
  std::vector<double> min_lrs_;  // one per group
  double best_;
  int64_t num_bad_epochs_ = 0, cooldown_counter_ = 0, last_epoch_ = 0;
};

}  // namespace colony::optim
