// The CTC loss's raw front: torch's checks of ctc_loss_allocate_outputs with its messages, the
// per-sample target offsets, and one kernel per direction (kernels/common/ctc_loss.h). The lengths
// arrive on the host (F::ctc_loss copies length tensors there, as torch does) and travel to the
// device in one [3, N] tensor with the target offsets.
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/ctc_loss.h"
#include "ops/op_checks.h"
#include "ops/raw_nn_ops.h"
#include "ops/raw_ops.h"
#include "runtime/run_kernel.h"

namespace colony::raw {
namespace {

// ATen's checkSize / checkDim wording, with its function name so a search finds torch's source.
constexpr const char* kChecking = " (while checking arguments for ctc_loss_allocate_outputs)";

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument(what); }

void check_length_values(const std::vector<int64_t>& lengths, const char* what, int64_t at_most) {
  for (int64_t v : lengths) {
    if (v < 0) {
      fail(std::string("Expected ") + what + " to have value at least 0, but got value " + std::to_string(v) + kChecking);
    }
    if (at_most >= 0 && v > at_most) {
      fail(std::string("Expected ") + what + " to have value at most " + std::to_string(at_most) + ", but got value " +
           std::to_string(v) + kChecking);
    }
  }
}

}  // namespace

CtcLossResult ctc_loss(const Tensor& log_probs, const Tensor& targets, const std::vector<int64_t>& input_lengths,
                       const std::vector<int64_t>& target_lengths, int64_t blank) {
  check_defined(log_probs, "ctc_loss", "log_probs");
  check_defined(targets, "ctc_loss", "targets");
  if (log_probs.dim() != 3) {
    fail("Expected 3-dimensional tensor, but got " + std::to_string(log_probs.dim()) +
         "-dimensional tensor for argument #1 'log_probs'" + kChecking);
  }
  if (log_probs.dtype() != kFloat32 && log_probs.dtype() != kFloat64) {
    fail(std::string("\"ctc_loss\" not implemented for '") + dtype_name(log_probs.dtype()) +
         "': log_probs must be float32 or float64 (torch's kernels have no others)");
  }
  if (targets.dim() < 1 || targets.dim() > 2) {
    fail("Expected 1 to 2 dimensions, but got " + std::to_string(targets.dim()) +
         "-dimensional tensor for argument #2 'targets'" + kChecking);
  }
  if (log_probs.numel() == 0) fail("log_probs tensor must not be empty");
  const int64_t time = log_probs.size(0), n = log_probs.size(1), classes = log_probs.size(2);
  if (blank < 0 || blank >= classes) fail("blank must be in label range");
  if (static_cast<int64_t>(input_lengths.size()) != n) fail("input_lengths must be of size batch_size");
  if (static_cast<int64_t>(target_lengths.size()) != n) fail("target_lengths must be of size batch_size");
  check_length_values(target_lengths, "target_lengths", -1);

  std::vector<int64_t> packed(static_cast<size_t>(3 * n));  // input lengths, target lengths, offsets
  int64_t max_target = 0, total = 0;
  for (int64_t b = 0; b < n; ++b) {
    const int64_t length = target_lengths[static_cast<size_t>(b)];
    packed[static_cast<size_t>(b)] = input_lengths[static_cast<size_t>(b)];
    packed[static_cast<size_t>(n + b)] = length;
    packed[static_cast<size_t>(2 * n + b)] = targets.dim() == 1 ? total : b * (targets.dim() == 2 ? targets.size(1) : 0);
    total += length;
    if (length > max_target) max_target = length;
  }
  if (targets.dim() == 1) {
    if (targets.size(0) != total) {
      fail("Expected tensor to have size " + std::to_string(total) + " at dimension 0, but got size " +
           std::to_string(targets.size(0)) + " for argument #2 'targets'" + kChecking);
    }
  } else {
    if (targets.size(0) != n) {
      fail("Expected tensor to have size " + std::to_string(n) + " at dimension 0, but got size " +
           std::to_string(targets.size(0)) + " for argument #2 'targets'" + kChecking);
    }
    if (targets.size(1) < max_target) {
      fail("Expected tensor to have size at least " + std::to_string(max_target) + " at dimension 1, but got size " +
           std::to_string(targets.size(1)) + " for argument #2 'targets'" + kChecking);
    }
  }
  check_length_values(input_lengths, "input_lengths", time);

  const Device device = log_probs.device();
  CtcLossResult r;
  r.blank = blank;
  r.max_target = max_target;
  r.targets = contiguous(to(targets, device, kInt64));
  // Host targets are checked here (the labels each sample reads); CUDA's kernel checks its own.
  if (r.targets.is_cpu()) {
    const int64_t* labels = r.targets.data_ptr<int64_t>();
    for (int64_t b = 0; b < n; ++b) {
      const int64_t* target = labels + packed[static_cast<size_t>(2 * n + b)];
      for (int64_t j = 0; j < packed[static_cast<size_t>(n + b)]; ++j) {
        if (target[j] < 0 || target[j] >= classes) {
          throw std::out_of_range("ctc_loss: target " + std::to_string(target[j]) + " (label " + std::to_string(j) +
                                  " of sample " + std::to_string(b) + ") is out of bounds for " +
                                  std::to_string(classes) + " classes");
        }
      }
    }
  }
  r.lengths = to(from_vector(packed, {3, n}), device, kInt64);
  const Tensor x = contiguous(log_probs);
  const TensorOptions opts = TensorOptions(x.dtype()).device(device);
  r.nll = empty({n}, opts);
  kernels::CtcLossParams p;
  p.max_time = time;
  p.batch = n;
  p.classes = classes;
  p.blank = blank;
  p.max_target = max_target;
  r.log_alpha = empty({n, time, p.positions()}, opts);
  const int64_t* lengths = r.lengths.data_ptr<int64_t>();
  run_kernel<kernels::CtcLossForward>(device, x.dtype(), x.data_ptr_raw(), r.targets.data_ptr<int64_t>(),
                                      lengths + 2 * n, lengths, lengths + n, p, r.nll.data_ptr_raw(),
                                      r.log_alpha.data_ptr_raw());
  return r;
}

Tensor ctc_loss_backward(const Tensor& grad_nll, const Tensor& log_probs, const CtcLossResult& forward,
                         bool zero_infinity) {
  const int64_t n = log_probs.size(1);
  if (grad_nll.sizes() != Shape{n} || grad_nll.dtype() != log_probs.dtype() || grad_nll.device() != log_probs.device()) {
    fail("ctc_loss_backward: grad_nll is " + std::string(dtype_name(grad_nll.dtype())) + " " +
         shape_str(grad_nll.sizes()) + " on " + grad_nll.device().str() + ", expected " +
         dtype_name(log_probs.dtype()) + " [" + std::to_string(n) + "] on " + log_probs.device().str());
  }
  const Tensor x = contiguous(log_probs), g = contiguous(grad_nll);
  Tensor grad = empty(x.sizes(), TensorOptions(x.dtype()).device(x.device()));
  kernels::CtcLossParams p;
  p.max_time = x.size(0);
  p.batch = n;
  p.classes = x.size(2);
  p.blank = forward.blank;
  p.max_target = forward.max_target;
  p.zero_infinity = zero_infinity;
  const int64_t* lengths = forward.lengths.data_ptr<int64_t>();
  run_kernel<kernels::CtcLossBackward>(x.device(), x.dtype(), g.data_ptr_raw(), x.data_ptr_raw(),
                                       forward.targets.data_ptr<int64_t>(), lengths + 2 * n, lengths, lengths + n,
                                       forward.nll.data_ptr_raw(), forward.log_alpha.data_ptr_raw(), p,
                                       grad.data_ptr_raw());
  return grad;
}

}  // namespace colony::raw
