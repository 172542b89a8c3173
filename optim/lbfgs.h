// L-BFGS as torch.optim.LBFGS (itself after minFunc): step(closure) runs up to max_iter
// iterations, each a two-loop recursion over the last history_size curvature pairs and a step of
// lr (the very first of size min(1, 1 / |g|_1) * lr), or a strong-Wolfe line search
// (line_search_fn("strong_wolfe"), torch's _strong_wolfe and _cubic_interpolate). The closure
// reevaluates the model: zero the gradients, compute the loss, call backward, return the loss.
//
//   LBFGS opt(model.parameters(), LBFGSOptions(1).line_search_fn("strong_wolfe"));
//   opt.step([&] { opt.zero_grad(); Tensor loss = criterion(model.forward(x), y); loss.backward(); return loss; });
//
// One parameter group only, as torch requires. The parameters are updated as one flat vector, so
// they must share a device and dtype. The state, kept with the first parameter as torch keeps it,
// has torch's keys: func_evals, n_iter, d, t, H_diag, prev_flat_grad, prev_loss, ro, al, old_dirs,
// old_stps; torch's lists are tensors here (old_dirs / old_stps a [k, n] stack of the k pairs, ro a
// [k] vector, al a [history_size] vector) and its Python numbers float64 scalars. The scalars of
// the recursion (y.s, ro, H_diag, t, the line search's values) are computed in double on the host,
// where torch keeps them as 0-d tensors of the parameters' dtype: a float32 run differs from
// torch's in the last bits; float64 runs match.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "optim/optimizer.h"

namespace colony::optim {

struct LBFGSOptions : detail::OptionsBase<LBFGSOptions> {
  static constexpr const char* kName = "LBFGSOptions";
  // LBFGSOptions() leaves lr unset (1).
  LBFGSOptions() = default;
  LBFGSOptions(double lr) : lr_(lr) { mark_set("lr"); }  // NOLINT
  COLONY_OPTIM_ARG(double, lr) = 1;
  COLONY_OPTIM_ARG(int64_t, max_iter) = 20;
  // Unless set: max_iter * 5 / 4, filled in by the optimizer as torch fills max_eval=None.
  COLONY_OPTIM_ARG(int64_t, max_eval) = 25;
  COLONY_OPTIM_ARG(double, tolerance_grad) = 1e-7;
  COLONY_OPTIM_ARG(double, tolerance_change) = 1e-9;
  COLONY_OPTIM_ARG(int64_t, history_size) = 100;
  COLONY_OPTIM_ARG(bool, maximize) = false;

 public:
  // std::nullopt (torch's None, the default) or "strong_wolfe"; anything else is refused here
  // with torch's message ("only 'strong_wolfe' is supported"), where torch refuses it at step().
  // A checkpoint holds it as "line_search_fn": 0 (none) or 1 (strong_wolfe).
  LBFGSOptions& line_search_fn(const std::optional<std::string>& fn);
  std::optional<std::string> line_search_fn() const {
    return strong_wolfe_ ? std::optional<std::string>("strong_wolfe") : std::nullopt;
  }

  template <class S, class Visit>
  static void fields(S& s, Visit&& visit) {
    visit("lr", s.lr_);
    visit("max_iter", s.max_iter_);
    visit("max_eval", s.max_eval_);
    visit("tolerance_grad", s.tolerance_grad_);
    visit("tolerance_change", s.tolerance_change_);
    visit("history_size", s.history_size_);
    visit("line_search_fn", s.strong_wolfe_);
    visit("maximize", s.maximize_);
  }

 private:
  bool strong_wolfe_ = false;
};

class LBFGS : public Optimizer {
 public:
  using LossClosure = std::function<Tensor()>;
  LBFGS(std::vector<Tensor> params, const LBFGSOptions& options = {});
  // torch's per-group form, which must hold exactly one group ("LBFGS doesn't support
  // per-parameter options (parameter groups)" otherwise).
  LBFGS(std::vector<ParamGroup> groups, const LBFGSOptions& defaults);
  // Runs the iterations; returns the closure's loss at the first evaluation, as torch does.
  Tensor step(const LossClosure& closure);
  // LBFGS needs the closure: throws, naming step(closure).
  void step() override;
  // torch's check: lr >= 0; Colony also refuses max_iter, max_eval or history_size below 1.
  void check_options(const OptimizerOptions& options) const override;

 private:
  Tensor gather_flat_grad() const;
  void add_grad(double t, const Tensor& d);
  double loss_of(const Tensor& loss) const;
  // Moves along t * d, evaluates the closure there, restores the parameters to x: (loss, flat gradient).
  std::pair<double, Tensor> directional_evaluate(const LossClosure& closure, const std::vector<Tensor>& x, double t,
                                                 const Tensor& d);
  std::vector<Tensor>& params();
};

}  // namespace colony::optim
