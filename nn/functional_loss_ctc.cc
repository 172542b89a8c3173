// F::ctc_loss: torch's ctc_loss_impl around the fused per-sample kernel (colony::ctc_loss_per_sample,
// autograd/ctc_loss.cc): unbatched input gains a batch of one, zero_infinity replaces inf losses by
// 0 with where(), and the reduction is composed from differentiable ops (Mean: each loss over
// clamp(target_length, 1), then the batch mean), so its gradient is autograd's, as in torch.
#include <limits>
#include <string>
#include <vector>

#include "autograd/autocast.h"
#include "autograd/nn_ops.h"
#include "autograd/ops.h"
#include "nn/functional.h"
#include "nn/loss_util.h"

namespace colony::nn::functional {
namespace {

using detail::fail;

// A lengths tensor on the host as int64 values (torch's ctc_loss copies it likewise).
std::vector<int64_t> host_lengths(const Tensor& lengths, const char* what) {
  if (!lengths.defined()) fail("ctc_loss", std::string(what) + " is undefined");
  if (lengths.is_floating_point() || lengths.dtype() == kBool) throw std::invalid_argument(std::string(what) + " must be integral");
  const Tensor host = raw::contiguous(raw::to(lengths, kCPU, kInt64));
  const int64_t* p = host.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + host.numel());
}

}  // namespace

Tensor ctc_loss(const Tensor& log_probs_arg, const Tensor& targets, const std::vector<int64_t>& input_lengths,
                const std::vector<int64_t>& target_lengths, const CTCLossFuncOptions& options) {
  const char* op = "ctc_loss";
  detail::check_reduction(op, options.reduction());
  if (!log_probs_arg.defined() || !targets.defined()) fail(op, "expected defined log_probs and targets");
  const Tensor cast = autocast::cast(autocast::Op::ctc_loss, log_probs_arg);
  const bool batched = cast.dim() == 3;
  const Tensor log_probs = cast.dim() == 2 ? unsqueeze(cast, 1) : cast;
  Tensor loss =
      ctc_loss_per_sample(log_probs, targets, input_lengths, target_lengths, options.blank(), options.zero_infinity());
  if (options.zero_infinity()) {
    loss = where(eq(loss, std::numeric_limits<double>::infinity()), detail::zero_like_scalar(loss), loss);
  }
  switch (options.reduction()) {
    case Reduction::Mean: {
      Tensor divisor = raw::clamp(raw::to(raw::from_vector(target_lengths, {static_cast<int64_t>(target_lengths.size())}),
                                          loss.device(), loss.dtype()),
                                  1.0, std::nullopt);
      return mean(div(loss, divisor));
    }
    case Reduction::Sum: return sum(loss);
    default: return batched ? loss : squeeze(loss, 0);
  }
}

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, const CTCLossFuncOptions& options) {
  return ctc_loss(log_probs, targets, host_lengths(input_lengths, "input_lengths"),
                  host_lengths(target_lengths, "target_lengths"), options);
}

}  // namespace colony::nn::functional
