#include "nn/adaptive.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "autograd/ops.h"
#include "ops/raw_ops.h"
#include "tensor/grad_mode.h"

namespace colony::nn {

AdaptiveLogSoftmaxWithLoss::AdaptiveLogSoftmaxWithLoss(const AdaptiveLogSoftmaxWithLossOptions& o) : options(o) {
  const std::vector<int64_t>& c = o.cutoffs();
  if (c.empty()) throw std::invalid_argument("cutoffs should be a sequence of length larger than 0");
  const bool sorted = std::is_sorted(c.begin(), c.end());
  const bool unique = std::set<int64_t>(c.begin(), c.end()).size() == c.size();
  if (!sorted || !unique || *std::min_element(c.begin(), c.end()) <= 0 ||
      *std::max_element(c.begin(), c.end()) > o.n_classes() - 1) {
    throw std::invalid_argument(
        "cutoffs should be a sequence of unique, positive integers sorted in an increasing order, where each value is "
        "between 1 and n_classes-1");
  }
  cutoffs = c;
  cutoffs.push_back(o.n_classes());
  shortlist_size = cutoffs[0];
  n_clusters = static_cast<int64_t>(cutoffs.size()) - 1;
  head_size = shortlist_size + n_clusters;
  head = register_module("head",
                         std::make_shared<Linear>(LinearOptions(o.in_features(), head_size).bias(o.head_bias())));
  tail = register_module("tail", std::make_shared<ModuleList>());
  for (int64_t i = 0; i < n_clusters; ++i) {
    // Python's int(in_features // div_value ** (i + 1)): the floor of the float quotient.
    const auto hsz = static_cast<int64_t>(
        std::floor(static_cast<double>(o.in_features()) / std::pow(o.div_value(), static_cast<double>(i + 1))));
    const int64_t osz = cutoffs[i + 1] - cutoffs[i];
    if (hsz <= 0) {
      // torch builds Linear(in_features, 0) here; Colony's Linear refuses empty layers.
      throw std::invalid_argument("AdaptiveLogSoftmaxWithLoss: tail cluster " + std::to_string(i) +
                                  " would project to in_features // div_value^" + std::to_string(i + 1) +
                                  " = 0 features (in_features " + std::to_string(o.in_features()) +
                                  "); use a smaller div_value or fewer cutoffs");
    }
    tail->push_back(std::make_shared<Sequential>(
        std::make_shared<Linear>(LinearOptions(o.in_features(), hsz).bias(false)),
        std::make_shared<Linear>(LinearOptions(hsz, osz).bias(false))));
  }
}

void AdaptiveLogSoftmaxWithLoss::reset_parameters() {
  head->reset_parameters();
  for (int64_t i = 0; i < n_clusters; ++i) {
    auto seq = tail->ptr<Sequential>(i);
    seq->ptr<Linear>(0)->reset_parameters();
    seq->ptr<Linear>(1)->reset_parameters();
  }
}

Tensor AdaptiveLogSoftmaxWithLoss::cluster_forward(int64_t i, const Tensor& input) {
  return tail->ptr<Sequential>(i)->forward(input);
}

namespace {

std::string size_str(const Tensor& t) {
  std::string s = "torch.Size([";
  for (int64_t d = 0; d < t.dim(); ++d) s += (d ? ", " : "") + std::to_string(t.size(d));
  return s + "])";
}

Tensor index_tensor(const std::vector<int64_t>& v, const Tensor& like) {
  return raw::from_vector(v, {static_cast<int64_t>(v.size())}, TensorOptions(kInt64).device(like.device()));
}

}  // namespace

ASMoutput AdaptiveLogSoftmaxWithLoss::forward(const Tensor& input_, const Tensor& target_) {
  // torch's checks, in its order and words.
  const int64_t targ_dim = target_.dim();
  if (targ_dim == 1) {
    if (input_.size(0) != target_.size(0)) {
      throw std::invalid_argument("Input and target should have the same size in the batch dimension.");
    }
    if (input_.dim() != 2) {
      throw std::invalid_argument("1D target tensor expects 2D input tensors, but found inputs with size " +
                                  size_str(input_));
    }
  } else if (targ_dim == 0) {
    if (input_.dim() != 1) {
      throw std::invalid_argument("0D target tensor expects 1D input tensors, but found inputs with size " +
                                  size_str(input_));
    }
  } else {
    throw std::invalid_argument("0D or 1D target tensor expected, multi-target not supported");
  }
  const bool batched = targ_dim > 0;
  const Tensor input = batched ? input_ : colony::unsqueeze(input_, 0);
  const Tensor target = batched ? target_ : raw::unsqueeze(target_, 0);
  const int64_t batch = target.size(0);

  // Each row's cluster from the targets on the host: the head's column to read (the class itself in
  // the shortlist, the cluster's logit otherwise) and the rows each cluster scores.
  const Tensor host = raw::contiguous(raw::to(target, kCPU, kInt64));
  const int64_t* t = host.data_ptr<int64_t>();
  std::vector<int64_t> gather_inds(batch);
  std::vector<std::vector<int64_t>> rows(n_clusters), relative(n_clusters);
  int64_t used_rows = 0, lo = 0, hi = 0;
  for (int64_t r = 0; r < batch; ++r) {
    lo = r == 0 ? t[r] : std::min(lo, t[r]);
    hi = r == 0 ? t[r] : std::max(hi, t[r]);
    if (t[r] < 0 || t[r] >= options.n_classes()) continue;
    ++used_rows;
    if (t[r] < shortlist_size) {
      gather_inds[r] = t[r];
      continue;
    }
    const int64_t i = std::upper_bound(cutoffs.begin(), cutoffs.end(), t[r]) - cutoffs.begin() - 1;
    gather_inds[r] = shortlist_size + i;
    rows[i].push_back(r);
    relative[i].push_back(t[r] - cutoffs[i]);
  }
  if (used_rows != batch) {
    throw std::out_of_range("Target values should be in [0, " + std::to_string(options.n_classes() - 1) +
                            "], but values in range [" + std::to_string(lo) + ", " + std::to_string(hi) +
                            "] were found. ");
  }

  // Each cluster's rows: log_softmax of its projection, read at the relative target. The pieces
  // (zeros for the shortlist rows) are joined and put back in row order by one index_select.
  std::vector<Tensor> pieces;
  std::vector<int64_t> order;
  std::vector<int64_t> shortlist_rows;
  for (int64_t r = 0; r < batch; ++r) {
    if (t[r] < shortlist_size) shortlist_rows.push_back(r);
  }
  if (!shortlist_rows.empty()) {
    pieces.push_back(raw::zeros({static_cast<int64_t>(shortlist_rows.size())},
                                TensorOptions(input.dtype()).device(input.device())));
    order = shortlist_rows;
  }
  for (int64_t i = 0; i < n_clusters; ++i) {
    if (rows[i].empty()) continue;
    Tensor subset = colony::index_select(input, 0, index_tensor(rows[i], input));
    Tensor logprob = colony::log_softmax(cluster_forward(i, subset), 1);
    Tensor local = colony::gather(logprob, 1, raw::unsqueeze(index_tensor(relative[i], input), 1));
    pieces.push_back(colony::reshape(local, {static_cast<int64_t>(rows[i].size())}));
    order.insert(order.end(), rows[i].begin(), rows[i].end());
  }
  std::vector<int64_t> position(batch);
  for (int64_t k = 0; k < batch; ++k) position[order[k]] = k;
  Tensor cluster_part = colony::index_select(colony::cat(pieces, 0), 0, index_tensor(position, input));

  Tensor head_logprob = colony::log_softmax(head->forward(input), 1);
  Tensor head_part = colony::gather(head_logprob, 1, raw::unsqueeze(index_tensor(gather_inds, input), 1));
  Tensor output = colony::add(cluster_part, colony::reshape(head_part, {batch}));
  Tensor loss = colony::mean(colony::neg(output));
  if (!batched) output = colony::reshape(output, {});
  return {output, loss};
}

Tensor AdaptiveLogSoftmaxWithLoss::full_log_prob(const Tensor& input, const Tensor& head_output) {
  Tensor head_logprob = colony::log_softmax(head_output, 1);
  std::vector<Tensor> parts = {colony::narrow(head_logprob, 1, 0, shortlist_size)};
  for (int64_t i = 0; i < n_clusters; ++i) {
    Tensor cluster_logprob = colony::log_softmax(cluster_forward(i, input), 1);
    parts.push_back(colony::add(cluster_logprob, colony::narrow(head_logprob, 1, shortlist_size + i, 1)));
  }
  return colony::cat(parts, 1);
}

Tensor AdaptiveLogSoftmaxWithLoss::log_prob(const Tensor& input) { return full_log_prob(input, head->forward(input)); }

Tensor AdaptiveLogSoftmaxWithLoss::predict(const Tensor& input) {
  NoGradGuard no_grad;
  Tensor head_output = head->forward(input);
  Tensor output = raw::argmax(head_output, 1);
  // The rows whose best head entry is a cluster's logit: only they need the tails.
  Tensor not_in_shortlist = raw::binary(raw::BinaryOp::Ge, output, static_cast<double>(shortlist_size));
  const Tensor host = raw::contiguous(raw::to(not_in_shortlist, kCPU, kInt64));
  const int64_t* m = host.data_ptr<int64_t>();
  std::vector<int64_t> rows;
  for (int64_t r = 0; r < host.numel(); ++r) {
    if (m[r]) rows.push_back(r);
  }
  if (rows.empty()) return output;
  Tensor index = index_tensor(rows, input);
  Tensor rows_log_prob = full_log_prob(raw::index_select(input, 0, index), raw::index_select(head_output, 0, index));
  Tensor best = raw::argmax(rows_log_prob, 1);
  return colony::index_copy(output, 0, index, best);
}

}  // namespace colony::nn
