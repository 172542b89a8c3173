#include "optim/lbfgs.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <stdexcept>
#include <utility>

#include "ops/raw_ops.h"
#include "optim/rule_step.h"
#include "tensor/grad_mode.h"

namespace colony::optim {
namespace {

double dot(const Tensor& a, const Tensor& b) { return raw::sum(raw::mul(a, b)).item<double>(); }
double abs_max(const Tensor& a) { return raw::amax(raw::abs(a)).item<double>(); }

// torch.optim.lbfgs._cubic_interpolate: the minimizer of the cubic through (x1, f1, g1) and
// (x2, f2, g2), clamped to the bounds (the two points unless given); their middle when the cubic
// has no real minimizer.
double cubic_interpolate(double x1, double f1, double g1, double x2, double f2, double g2,
                         std::optional<std::pair<double, double>> bounds = std::nullopt) {
  double lo, hi;
  if (bounds) {
    std::tie(lo, hi) = *bounds;
  } else if (x1 <= x2) {
    lo = x1, hi = x2;
  } else {
    lo = x2, hi = x1;
  }
  const double d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2);
  const double d2_square = d1 * d1 - g1 * g2;
  if (d2_square >= 0) {
    const double d2 = std::sqrt(d2_square);
    const double min_pos = x1 <= x2 ? x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
                                    : x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2));
    return std::min(std::max(min_pos, lo), hi);
  }
  return (lo + hi) / 2.0;
}

struct LineSearchResult {
  double f;
  Tensor g;
  double t;
  int64_t evals;
};

// torch.optim.lbfgs._strong_wolfe, step for step: bracket a step satisfying the strong Wolfe
// conditions (c1 = 1e-4, c2 = 0.9), then zoom in by cubic interpolation.
LineSearchResult strong_wolfe(const std::function<std::pair<double, Tensor>(double)>& obj, double t, const Tensor& d,
                              double f, const Tensor& g_in, double gtd, double tolerance_change, int64_t max_ls) {
  constexpr double c1 = 1e-4, c2 = 0.9;
  const double d_norm = abs_max(d);
  Tensor g = raw::clone(g_in);
  auto [f_new, g_new] = obj(t);
  int64_t evals = 1;
  double gtd_new = dot(g_new, d);
  double t_prev = 0, f_prev = f, gtd_prev = gtd;
  Tensor g_prev = g;
  bool done = false;
  int64_t ls_iter = 0;
  std::vector<double> bracket, bracket_f, bracket_gtd;
  std::vector<Tensor> bracket_g;
  while (ls_iter < max_ls) {
    if (f_new > f + c1 * t * gtd || (ls_iter > 1 && f_new >= f_prev)) {
      bracket = {t_prev, t}, bracket_f = {f_prev, f_new}, bracket_g = {g_prev, raw::clone(g_new)};
      bracket_gtd = {gtd_prev, gtd_new};
      break;
    }
    if (std::abs(gtd_new) <= -c2 * gtd) {
      bracket = {t}, bracket_f = {f_new}, bracket_g = {g_new};
      done = true;
      break;
    }
    if (gtd_new >= 0) {
      bracket = {t_prev, t}, bracket_f = {f_prev, f_new}, bracket_g = {g_prev, raw::clone(g_new)};
      bracket_gtd = {gtd_prev, gtd_new};
      break;
    }
    // Interpolate between t_prev and t, at least 1% beyond t and at most ten times it.
    const double min_step = t + 0.01 * (t - t_prev), max_step = t * 10;
    const double tmp = t;
    t = cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, std::make_pair(min_step, max_step));
    t_prev = tmp, f_prev = f_new, g_prev = raw::clone(g_new), gtd_prev = gtd_new;
    std::tie(f_new, g_new) = obj(t);
    ++evals;
    gtd_new = dot(g_new, d);
    ++ls_iter;
  }
  // Out of evaluations (torch's ls_iter == max_ls; >= also covers a max_eval below the count
  // already spent, where torch fails on an unbound bracket).
  if (ls_iter >= max_ls) bracket = {0, t}, bracket_f = {f, f_new}, bracket_g = {g, g_new};

  // Zoom until the bracket is too small or the conditions hold.
  bool insuf_progress = false;
  size_t low = bracket_f[0] <= bracket_f.back() ? 0 : 1, high = 1 - low;
  while (!done && ls_iter < max_ls) {
    if (std::abs(bracket[1] - bracket[0]) * d_norm < tolerance_change) break;
    t = cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1]);
    // Too close to an end of the bracket: move away from it, unless the last step made progress.
    const double bmax = std::max(bracket[0], bracket[1]), bmin = std::min(bracket[0], bracket[1]);
    const double eps = 0.1 * (bmax - bmin);
    if (std::min(bmax - t, t - bmin) < eps) {
      if (insuf_progress || t >= bmax || t <= bmin) {
        t = std::abs(t - bmax) < std::abs(t - bmin) ? bmax - eps : bmin + eps;
        insuf_progress = false;
      } else {
        insuf_progress = true;
      }
    } else {
      insuf_progress = false;
    }
    std::tie(f_new, g_new) = obj(t);
    ++evals;
    gtd_new = dot(g_new, d);
    ++ls_iter;
    if (f_new > f + c1 * t * gtd || f_new >= bracket_f[low]) {
      bracket[high] = t, bracket_f[high] = f_new, bracket_g[high] = raw::clone(g_new), bracket_gtd[high] = gtd_new;
      low = bracket_f[0] <= bracket_f[1] ? 0 : 1, high = 1 - low;
    } else {
      if (std::abs(gtd_new) <= -c2 * gtd) {
        done = true;
      } else if (gtd_new * (bracket[high] - bracket[low]) >= 0) {
        bracket[high] = bracket[low], bracket_f[high] = bracket_f[low], bracket_g[high] = bracket_g[low];
        bracket_gtd[high] = bracket_gtd[low];
      }
      bracket[low] = t, bracket_f[low] = f_new, bracket_g[low] = raw::clone(g_new), bracket_gtd[low] = gtd_new;
    }
  }
  return {bracket_f[low], bracket_g[low], bracket[low], evals};
}

double scalar(const std::map<std::string, Tensor>& state, const char* name, double otherwise) {
  auto it = state.find(name);
  return it == state.end() ? otherwise : raw::to(it->second, kCPU, kFloat64).item<double>();
}

Tensor host_vector(const std::vector<double>& v) {
  return raw::from_vector(v, {static_cast<int64_t>(v.size())});
}

std::vector<double> host_values(const Tensor& t) {
  Tensor c = raw::contiguous(raw::to(t, kCPU, kFloat64));
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

LBFGSOptions with_max_eval(LBFGSOptions o) {
  if (!o.is_set("max_eval")) o.max_eval(o.max_iter() * 5 / 4);  // torch's max_eval=None
  return o;
}

}  // namespace

LBFGSOptions& LBFGSOptions::line_search_fn(const std::optional<std::string>& fn) {
  if (fn && *fn != "strong_wolfe") {
    throw std::invalid_argument("LBFGS: only 'strong_wolfe' is supported as line_search_fn, got '" + *fn + "'");
  }
  strong_wolfe_ = fn.has_value();
  mark_set("line_search_fn");
  return *this;
}

LBFGS::LBFGS(std::vector<Tensor> params, const LBFGSOptions& options)
    : LBFGS(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

LBFGS::LBFGS(std::vector<ParamGroup> groups, const LBFGSOptions& defaults)
    : Optimizer(std::move(groups), with_max_eval(defaults)) {
  if (param_groups().size() != 1) {
    throw std::invalid_argument("LBFGS doesn't support per-parameter options (parameter groups)");
  }
  check_options(param_groups()[0].options.get());
  const Tensor& first = params()[0];
  for (const Tensor& p : params()) {
    if (p.device() != first.device() || p.dtype() != first.dtype()) {
      throw std::invalid_argument("LBFGS: all parameters must share one device and dtype (they are updated as one "
                                  "flat vector), got " + first.device().str() + " and " + p.device().str());
    }
  }
}

void LBFGS::check_options(const OptimizerOptions& options) const {
  Optimizer::check_options(options);
  const auto& o = dynamic_cast<const LBFGSOptions&>(options);
  detail::check_range(o.lr() >= 0, "LBFGS", "learning rate", o.lr(), "lr >= 0");
  detail::check_range(o.max_iter() >= 1, "LBFGS", "max_iter", o.max_iter(), "max_iter >= 1");
  detail::check_range(o.max_eval() >= 1, "LBFGS", "max_eval", o.max_eval(), "max_eval >= 1");
  detail::check_range(o.history_size() >= 1, "LBFGS", "history_size", o.history_size(), "history_size >= 1");
}

void LBFGS::step() {
  throw std::logic_error("LBFGS::step: LBFGS reevaluates the loss several times per step; call step(closure) with a "
                         "closure that zeroes the gradients, computes the loss, calls backward and returns the loss");
}

std::vector<Tensor>& LBFGS::params() { return param_groups()[0].params; }

Tensor LBFGS::gather_flat_grad() const {
  std::vector<Tensor> views;
  for (const Tensor& p : param_groups()[0].params) {
    views.push_back(p.grad().defined() ? raw::reshape(p.grad(), {p.numel()})
                                       : raw::zeros({p.numel()}, TensorOptions(p.dtype()).device(p.device())));
  }
  Tensor flat = raw::cat(views, 0);
  return param_groups()[0].options.as<LBFGSOptions>().maximize() ? raw::neg(flat) : flat;
}

void LBFGS::add_grad(double t, const Tensor& d) {
  int64_t offset = 0;
  for (Tensor& p : params()) {
    const int64_t n = p.numel();
    Tensor updated = raw::add(p, raw::reshape(raw::narrow(d, 0, offset, n), p.shape()), t);
    raw::copy_(p, updated);
    offset += n;
  }
}

double LBFGS::loss_of(const Tensor& loss) const {
  const double v = raw::to(loss, kCPU, kFloat64).item<double>();
  return param_groups()[0].options.as<LBFGSOptions>().maximize() ? -v : v;
}

std::pair<double, Tensor> LBFGS::directional_evaluate(const LossClosure& closure, const std::vector<Tensor>& x,
                                                      double t, const Tensor& d) {
  add_grad(t, d);
  double loss;
  {
    EnableGradGuard enable;
    loss = loss_of(closure());
  }
  Tensor flat_grad = gather_flat_grad();
  for (size_t i = 0; i < x.size(); ++i) raw::copy_(params()[i], x[i]);
  return {loss, flat_grad};
}

Tensor LBFGS::step(const LossClosure& closure) {
  if (param_groups().size() != 1) {
    throw std::invalid_argument("LBFGS doesn't support per-parameter options (parameter groups); it has " +
                                std::to_string(param_groups().size()));
  }
  NoGradGuard no_grad;
  const auto o = param_groups()[0].options.as<LBFGSOptions>();
  const double lr = o.lr(), tolerance_grad = o.tolerance_grad(), tolerance_change = o.tolerance_change();
  const int64_t max_iter = o.max_iter(), max_eval = o.max_eval(), history_size = o.history_size();
  auto& state = state_of(params()[0]);
  auto evaluate = [&] {
    EnableGradGuard enable;
    return closure();
  };

  Tensor orig_loss = evaluate();
  double loss = loss_of(orig_loss);
  int64_t current_evals = 1;
  double func_evals = scalar(state, "func_evals", 0) + 1;
  double state_n_iter = scalar(state, "n_iter", 0);
  auto save_counts = [&] {
    state["func_evals"] = raw::scalar_tensor(func_evals, kFloat64);
    state["n_iter"] = raw::scalar_tensor(state_n_iter, kFloat64);
  };
  Tensor flat_grad = gather_flat_grad();
  bool opt_cond = abs_max(flat_grad) <= tolerance_grad;
  if (opt_cond) {  // already optimal
    save_counts();
    return orig_loss;
  }

  // The state the previous step left (torch's state.get: absent before the first iteration).
  Tensor d = state.count("d") ? state["d"] : Tensor();
  double t = scalar(state, "t", 0);
  std::vector<Tensor> old_dirs, old_stps;
  for (const char* name : {"old_dirs", "old_stps"}) {
    auto it = state.find(name);
    if (it == state.end()) continue;
    auto& list = std::string(name) == "old_dirs" ? old_dirs : old_stps;
    for (int64_t i = 0; i < it->second.shape()[0]; ++i) list.push_back(raw::select(it->second, 0, i));
  }
  std::vector<double> ro = state.count("ro") ? host_values(state["ro"]) : std::vector<double>();
  std::vector<double> al = state.count("al") ? host_values(state["al"]) : std::vector<double>();
  if (ro.size() != old_dirs.size() || old_stps.size() != old_dirs.size()) {
    throw std::invalid_argument("LBFGS: the state's old_dirs, old_stps and ro hold " + std::to_string(old_dirs.size()) +
                                ", " + std::to_string(old_stps.size()) + " and " + std::to_string(ro.size()) +
                                " entries, expected as many each");
  }
  double h_diag = scalar(state, "H_diag", 1);
  Tensor prev_flat_grad = state.count("prev_flat_grad") ? state["prev_flat_grad"] : Tensor();
  double prev_loss = scalar(state, "prev_loss", 0);

  int64_t n_iter = 0;
  while (n_iter < max_iter) {
    ++n_iter;
    ++state_n_iter;
    // The descent direction.
    if (state_n_iter == 1) {
      d = raw::neg(flat_grad);
      old_dirs.clear(), old_stps.clear(), ro.clear();
      h_diag = 1;
    } else {
      // Update the memory with the last step's curvature pair, when it is positive enough.
      Tensor y = raw::sub(flat_grad, prev_flat_grad);
      Tensor s = raw::mul(d, t);
      const double ys = dot(y, s);
      if (ys > 1e-10) {
        if (static_cast<int64_t>(old_dirs.size()) == history_size) {
          old_dirs.erase(old_dirs.begin()), old_stps.erase(old_stps.begin()), ro.erase(ro.begin());
        }
        old_dirs.push_back(y), old_stps.push_back(s), ro.push_back(1.0 / ys);
        h_diag = ys / dot(y, y);
      }
      // The two-loop recursion: d = -H g.
      const size_t num_old = old_dirs.size();
      al.resize(static_cast<size_t>(history_size), 0.0);
      Tensor q = raw::neg(flat_grad);
      for (size_t i = num_old; i-- > 0;) {
        al[i] = dot(old_stps[i], q) * ro[i];
        q = raw::add(q, old_dirs[i], -al[i]);
      }
      Tensor r = raw::mul(q, h_diag);
      for (size_t i = 0; i < num_old; ++i) {
        const double be_i = dot(old_dirs[i], r) * ro[i];
        r = raw::add(r, old_stps[i], al[i] - be_i);
      }
      d = r;
    }
    prev_flat_grad = raw::clone(flat_grad);
    prev_loss = loss;

    // The step length.
    t = state_n_iter == 1 ? std::min(1.0, 1.0 / raw::sum(raw::abs(flat_grad)).item<double>()) * lr : lr;
    const double gtd = dot(flat_grad, d);
    if (gtd > -tolerance_change) break;  // the directional derivative is below the tolerance

    int64_t ls_func_evals = 0;
    if (o.line_search_fn()) {
      std::vector<Tensor> x_init;
      for (const Tensor& p : params()) x_init.push_back(raw::clone(p));
      LineSearchResult ls = strong_wolfe([&](double step) { return directional_evaluate(closure, x_init, step, d); },
                                         t, d, loss, flat_grad, gtd, tolerance_change, max_eval - current_evals);
      loss = ls.f, flat_grad = ls.g, t = ls.t, ls_func_evals = ls.evals;
      add_grad(t, d);
      opt_cond = abs_max(flat_grad) <= tolerance_grad;
    } else {
      add_grad(t, d);
      if (n_iter != max_iter) {
        // Reevaluate for the next iteration (not after the last, as torch).
        loss = loss_of(evaluate());
        flat_grad = gather_flat_grad();
        opt_cond = abs_max(flat_grad) <= tolerance_grad;
        ls_func_evals = 1;
      }
    }
    current_evals += ls_func_evals;
    func_evals += static_cast<double>(ls_func_evals);

    if (n_iter == max_iter || current_evals >= max_eval || opt_cond) break;
    if (abs_max(raw::mul(d, t)) <= tolerance_change) break;  // lack of progress
    if (std::abs(loss - prev_loss) < tolerance_change) break;
  }

  save_counts();
  state["d"] = d;
  state["t"] = raw::scalar_tensor(t, kFloat64);
  state["H_diag"] = raw::scalar_tensor(h_diag, kFloat64);
  state["prev_flat_grad"] = prev_flat_grad;
  state["prev_loss"] = raw::scalar_tensor(prev_loss, kFloat64);
  state["ro"] = host_vector(ro);
  state["al"] = host_vector(al);
  const Tensor& first = params()[0];
  const int64_t n = d.numel();
  for (auto [name, list] : {std::make_pair("old_dirs", &old_dirs), std::make_pair("old_stps", &old_stps)}) {
    state[name] = list->empty() ? raw::zeros({0, n}, TensorOptions(first.dtype()).device(first.device()))
                                : raw::stack(*list, 0);
  }
  return orig_loss;
}

}  // namespace colony::optim
